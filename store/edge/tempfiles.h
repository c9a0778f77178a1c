// Temporary files that kistore's writers create inside a store's git
// directory, and the sweep that removes those a crash left behind. They are
// made and written through the file gate (files.h: NewFile), which this
// header brings along with it.
//
// A writer makes every file under a temporary name in the folder that will
// hold it (or in objects/ for a loose object), syncs it, then renames it into
// place; a kill -9 between the two leaves the temporary file. Its name says
// whose it is: "tmp_<kind>_kistore_<pid>_XXXXXX", so that the next writer can
// tell a dead writer's leftovers (removed) from a live writer's work in
// progress (never touched). Names from releases before the pid was recorded
// ("tmp_<kind>_kistore_XXXXXX") are removed once they are an hour old, longer
// than any write takes. Files of other programs (git's own tmp_pack_*, a
// pull's quarantine) are not kistore's to remove.
//
// Thread-safety: the functions touch only the file system; concurrent
// writers in any number of processes may call them at once.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "store/edge/files.h"

namespace kistore {

// A mkstemp template for a temporary file of `kind` ("pack", "idx", "obj")
// in folder `dir`: "<dir>/tmp_<kind>_kistore_<this pid>_XXXXXX".
std::string temp_file_template(std::string_view dir, std::string_view kind);

// Removes from `dir` (not recursively) kistore temporary files whose writer
// is no longer running, and pid-less ones over an hour old. Returns how many
// were removed. Never throws: a folder that cannot be read, or a file that
// cannot be removed, is left for the next writer.
std::size_t sweep_stale_temp_files(const std::string& dir);

}  // namespace kistore
