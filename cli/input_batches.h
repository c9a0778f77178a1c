// Reading `kistore add`'s inputs in batches of bounded size, for commands
// whose input may be far larger than memory.
//
// read_in_batches expands PATH... as parse_paths does (files; folders read
// recursively for *.json and *.jsonl, in sorted order; "-" for stdin), and
// parses them the same way (JSON Lines line by line; a file of one JSON text
// whole, up to the 16 MiB a text may have), but hands the items and errors
// over in order, a batch at a time: at most a few thousand lines or a few
// tens of MiB of text are held at once. Lines of a batch are parsed on a
// thread beside the reader while on_batch takes the batch before (so at most
// three batches are held: one read, one parsed, one handed over).
//
// Thread-safety: reentrant; on_batch runs on the calling thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "objects/input.h"

namespace kistore::cli {

struct BatchLimits {
  // A parsed line of bundles takes about ten times its text: 512 lines of
  // 3 KB hold some 15 MB, and keep every core busy.
  std::size_t units = 512;        // lines (or whole files) per batch
  std::size_t bytes = 16u << 20;  // bytes of text per batch (one JSON text may have 16 MiB)
};

// Calls on_batch with each batch's items and errors, in input order; the
// batch is freed when on_batch returns. Error(kInvalidInput) naming the path
// for one that does not exist, Error(kIO) for one that cannot be read
// (nothing more is read then).
void read_in_batches(const std::vector<std::string>& paths, const std::function<void(ParsedInput&)>& on_batch,
                     BatchLimits limits = {});

}  // namespace kistore::cli
