// Format-3 stores for the tests of the rooms that know format 3 (refs/layout.h:
// taught room by room; commands do not open such a store yet).
#pragma once

#include <optional>
#include <string>

#include "refs/layout.h"
#include "store/core/store.h"

namespace kistore::test_support {

// Makes the empty `store`'s first commit name format 3, by `author`.
inline void make_format3(Store& store, const std::string& author = "Test <t@example.com>") {
  CommitOptions o;
  o.author = author;
  o.time = 1767225600;
  o.upgrade = true;
  store.commit(
      [](const Snapshot&) -> std::optional<ChangeSet> {
        ChangeSet c;
        c.upserts.emplace(std::string(kFormatPath), std::string(kFormat3Bytes));
        c.op = "upgrade";
        c.summary = "format 3";
        return c;
      },
      o);
}

}  // namespace kistore::test_support
