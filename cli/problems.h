// How problems (refs/problem.h) are shown, the same for verify, pull, push
// and clone: as SPEC §3's JSON {"kind","path","detail"} and as one line of
// text "<label>: <kind>: <path>: <detail>" on stderr.
//
// Thread-safety: problems_json is pure; print_problems writes to stderr.
#pragma once

#include <vector>

#include "objects/json.h"
#include "refs/problem.h"

namespace kistore::cli {

// [{"kind","path","detail"}, ...], in the order given.
Json problems_json(const std::vector<Problem>& problems);

// One line per problem on stderr, each starting with `label` ("problem",
// "warning", "refused").
void print_problems(const char* label, const std::vector<Problem>& problems);

}  // namespace kistore::cli
