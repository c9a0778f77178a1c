// SHA-256 of an input read a block at a time, for inputs that are not held
// whole (a file an importer streams): the same Digest as Digest::of of all the
// bytes together.
//
// Thread-safety: reentrant.
#pragma once

#include <cstddef>
#include <functional>

#include "objects/digest.h"

namespace kistore {

// Hashes what `read` hands over until it returns 0 (it writes up to `size`
// bytes at `buffer` and returns how many). Exceptions from `read` pass through.
Digest digest_of_stream(const std::function<std::size_t(char* buffer, std::size_t size)>& read);

}  // namespace kistore
