// map_in_order (store/ingest/harness_import.h): records mapped on two cores
// reach the sink exactly as one record after another would hand them.
#include "store/ingest/harness_import.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace kistore {
namespace {

struct Seen {
  std::vector<std::string> calls;  // "record:<where>" / "error:<where>: <message>", in order
  HarnessSink sink() {
    return {[this](HarnessRecord&& r) { calls.push_back("record:" + r.where); },
            [this](HarnessError&& e) { calls.push_back("error:" + e.where + ": " + e.message); }};
  }
};

// Record i: a bundle for i % 3 == 0, a rejection for 1, nothing for 2.
RecordOutcome outcome_of(std::size_t i) {
  const std::string where = "f: /" + std::to_string(i);
  if (i % 3 == 0) return HarnessRecord{where, Bundle{}};
  if (i % 3 == 1) return HarnessError{where, "bad " + std::to_string(i)};
  return {};
}

std::vector<std::string> expected_calls(std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string where = "f: /" + std::to_string(i);
    if (i % 3 == 0) out.push_back("record:" + where);
    if (i % 3 == 1) out.push_back("error:" + where + ": bad " + std::to_string(i));
  }
  return out;
}

TEST_CASE("map_in_order hands outcomes over in record order, across windows") {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, kMapWindow - 1, kMapWindow,
                        3 * kMapWindow + 7}) {
    Seen seen;
    std::mutex mutex;
    std::map<const BundleMaker*, std::thread::id> maker_thread;
    std::vector<int> mapped(n, 0);
    map_in_order(n, [&](std::size_t i, BundleMaker& maker) {
      {
        std::lock_guard lock(mutex);
        maker_thread.emplace(&maker, std::this_thread::get_id());
        ++mapped[i];
      }
      return outcome_of(i);
    }, seen.sink());
    CHECK(seen.calls == expected_calls(n));
    for (std::size_t i = 0; i < n; ++i) CHECK(mapped[i] == 1);
    CHECK(maker_thread.size() <= 2);  // one maker a part
  }
}

TEST_CASE("map_in_order rethrows a failure in its record's place, after what came before it") {
  const std::size_t n = 3 * kMapWindow, bad = kMapWindow + 100;
  Seen seen;
  CHECK_THROWS_WITH(map_in_order(n, [&](std::size_t i, BundleMaker&) -> RecordOutcome {
                      // The second failure is in the window's other part.
                      if (i == bad || i == bad + 300) throw std::runtime_error("failed at " + std::to_string(i));
                      return outcome_of(i);
                    }, seen.sink()),
                    "failed at " + std::to_string(bad));
  CHECK(seen.calls == expected_calls(bad));  // nothing of the record that failed or after it
}

TEST_CASE("map_in_order: a failure seen first does not stop an earlier record that fails too") {
  // Record `bad` is slow, so the failure of a later record in another block
  // is seen first; `bad` is still mapped (it comes before), and its failure is
  // the one rethrown, after every record before it.
  const std::size_t n = 2 * kMapWindow, bad = kMapWindow + 3, later = kMapWindow + 5 * kMapBlock;
  Seen seen;
  std::vector<int> mapped(n, 0);
  CHECK_THROWS_WITH(map_in_order(n, [&](std::size_t i, BundleMaker&) -> RecordOutcome {
                      mapped[i] = 1;
                      if (i == bad) {
                        std::this_thread::sleep_for(std::chrono::milliseconds(50));
                        throw std::runtime_error("failed at " + std::to_string(i));
                      }
                      if (i == later) throw std::runtime_error("failed at " + std::to_string(i));
                      return outcome_of(i);
                    }, seen.sink()),
                    "failed at " + std::to_string(bad));
  CHECK(seen.calls == expected_calls(bad));
  for (std::size_t i = 0; i <= bad; ++i) CHECK(mapped[i] == 1);
}

TEST_CASE("map_in_order: a rejection is an outcome, not a failure") {
  Seen seen;
  map_in_order(4, [&](std::size_t i, BundleMaker&) -> RecordOutcome {
    if (i == 1) return HarnessError{"f:2", "f:2: expected an object, found 3"};
    return HarnessRecord{"f:" + std::to_string(i + 1), Bundle{}};
  }, seen.sink());
  CHECK(seen.calls == std::vector<std::string>{"record:f:1", "error:f:2: f:2: expected an object, found 3", "record:f:3",
                                               "record:f:4"});
}

}  // namespace
}  // namespace kistore
