#include "store/verify/verify.h"

#include <exception>
#include <thread>
#include <vector>

#include "store/git/git.h"
#include "store/verify/verify_state.h"

namespace kistore {
namespace verifying {
namespace {

// The checks in order. The shape check (one thread) and the walk (every
// core) run at once, the walk trusting the shape check to hash every tree.
// When the shape check finds anything wrong, what the walk found is dropped
// and the walk runs again as it would alone (hashing trees, throwing on one
// it cannot read), or not at all when a tree is too deep: the report is the
// same as from one after the other.
VerifyReport run(VerifyState& s) {
  Shape shape;
  std::exception_ptr shape_error;
  std::thread shape_thread([&] {
    try {
      shape = check_shape(s);
    } catch (...) {
      shape_error = std::current_exception();
    }
  });
  std::vector<WalkPartResult> parts;
  std::vector<Problem> links;
  std::exception_ptr walk_error;
  try {
    walk_tree(s, parts, links, true);
  } catch (...) {
    walk_error = std::current_exception();
  }
  s.timer.lap("walk");
  shape_thread.join();
  s.timer.lap("shape check (after the walk)");
  if (shape_error) std::rethrow_exception(shape_error);
  append(s.report.problems, shape.problems);
  if (shape.too_deep) {
    // A tree deeper than any walk goes: report that, and the history.
    check_history(s);
    return std::move(s.report);
  }
  if (!shape.hashed) {
    parts.clear(), links.clear();
    s.objects.clear();
    walk_tree(s, parts, links, false);
  } else if (walk_error) {
    std::rethrow_exception(walk_error);
  }
  append(s.report.problems, links);
  merge_parts(s, parts);
  s.timer.lap("merge");
  check_index(s);
  s.timer.lap("index: source entries");
  check_history(s);
  s.timer.lap("history");
  s.report.objects = s.objects.size();
  return std::move(s.report);
}

}  // namespace
}  // namespace verifying

VerifyReport verify_store(const Store& store, const VerifyOptions& options) {
  git::HashCheck hashes(true);  // every commit and tree of the history is checked against its id
  VerifyReport report;
  PhaseTimer timer(options.timing, "verify");
  {
    verifying::VerifyState state(store, options);
    report = verifying::run(state);
    timer.lap("all but freeing");
  }
  timer.lap("freeing");
  return report;
}

}  // namespace kistore
