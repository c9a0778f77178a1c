// A ranked comparison group as `rank --json` prints it (SPEC §3):
// {"group":"sha256:…","members":[{"rank","run","implementation","value",
// "unit","level",("verified","why"),"observedAt",("reason"),"reruns"}]}.
//
// For `rank --json` (the static site says so on each group page, and writes
// no copy of it: cli/site/site.h).
// Pure functions of their arguments; never fail (allocation aside).
#pragma once

#include <string>

#include "objects/json.h"
#include "store/query/group_view.h"

namespace kistore::cli {

// The date part (YYYY-MM-DD) of the run's spec.observedAt, or "".
std::string observed_date(const Document& run);

// One member of the group, as above.
Json group_row_json(const GroupRow& row);
// The whole document.
Json group_view_json(const GroupView& view);

}  // namespace kistore::cli
