// Ranking a comparison group (SPEC §1 "Comparison key"), for every reader that
// shows a rank (`rank`, `show`, `groups`) and for `verify`'s warnings.
//
// Runs are ranked by their primary measurement, lower is better, with standard
// competition ranking: ties share a rank and the next rank skips (1, 2, 2, 4).
// Values are compared on one scale, never as bare numbers:
//   - time: ns, us, ms, s (converted to ns);
//   - memory: B, KB/MB/GB (10^3 steps), KiB/MiB/GiB (2^10 steps) (converted to B);
//   - any other unit compares only with itself, spelled exactly the same.
// Unit names are case-sensitive, as SPEC spells them ("MS" and "µs" are other units).
//
// The group's scale is decided from its members, so that what a store holds
// cannot be ranked two ways: time if any member has a positive finite value in
// a time unit; else memory if any has one in a memory unit; else the other unit
// that the most such members share (ties: the unit first in byte order). Time
// first means a group of timed runs keeps its ranking whatever else is added to
// it: a run in "widgets", in "B", with a zero, negative or missing value never
// takes a rank, never moves one, and never changes what the group compares.
//
// A member that cannot be compared on the group's scale is *unrankable*: its
// rank is 0, `unrankable` says why, and it is listed after every ranked member.
// So is a member whose status is neither "passed" nor unread (""): the
// harness found its output wrong, or it failed to build or run. Such members
// do not decide the group's scale either.
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "objects/digest.h"
#include "refs/index.h"
#include "refs/level.h"

namespace kistore {

struct GroupMember {
  Digest run;
  std::optional<Measurement> primary;
  Level level = Level::kReported;
  // The run's spec.status ("" when the reader did not read it). A run whose
  // harness did not pass it (incorrect, compile_error, runtime_error, ...)
  // is unrankable, whatever its time: a fast wrong kernel never ranks.
  std::string status;
};

// The scale a group's values are compared on.
struct RankScale {
  enum class Kind { kTime, kMemory, kUnit };
  Kind kind = Kind::kTime;
  std::string unit;  // kUnit only: the one unit compared, exactly as spelled

  // "time", "memory", or "unit \"<unit>\"" (quoted as in unrankable reasons).
  std::string describe() const;
  bool operator==(const RankScale&) const = default;
};

struct RankedMember {
  int rank = 0;             // 1-based; 0 = unrankable
  GroupMember member;       // as given: the original value and unit, for display
  std::string unrankable;   // rank 0 only: why, e.g. "value -3 is not positive"
};

// `value` in `unit` on `kind`'s base scale (ns for time, B for memory); nullopt
// when the unit is not one of that scale's. kUnit: `value` when `unit` equals
// the scale's unit exactly.
std::optional<double> to_scale(double value, const std::string& unit, const RankScale& scale);

// The scale of a group with these members, as the header says. A group where no
// member has a positive finite value gets the time scale (nothing ranks in it).
RankScale group_scale(const std::vector<GroupMember>& members);

// Why a run with this primary measurement cannot be ranked on `scale`, or
// nullopt when it can. One of:
//   "no primary measurement"
//   "unit \"widgets\" does not convert to time (ns, us, ms, s)"
//   "unit \"ns\" does not convert to memory (B, KB, MB, GB, KiB, MiB, GiB)"
//   "unit \"ms\" is not the group's unit \"cycles\""
//   "value -3 is not positive"            (zero as well)
//   "value is not a finite number"        (NaN, infinities)
//   "value 1e+308 s overflows on the time scale"
// Units are quoted with every byte outside printable ASCII, `"` and `\` escaped
// (\xNN), and cut after 32 bytes with "…", so a reason is safe on a terminal.
// `verify` calls this, with group_scale() of the group, to warn about such runs.
std::optional<std::string> unrankable_reason(const std::optional<Measurement>& primary, const RankScale& scale);

// Ranks `members` on group_scale(members). Ranked members come first, by
// converted value, ties in digest order; unrankable ones follow in digest order.
std::vector<RankedMember> rank_group(std::vector<GroupMember> members);

// Keeps members at or above `min_level`, then ranks them (the scale is that of
// the members kept).
std::vector<RankedMember> rank_group(std::vector<GroupMember> members, Level min_level);

// How many of `ranked` have a rank: the M of "rank N of M".
std::size_t ranked_count(const std::vector<RankedMember>& ranked);

}  // namespace kistore
