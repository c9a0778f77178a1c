// Evidence levels (SPEC §1): what a run's numbers are worth.
//
// Ordered from least to most trusted: disputed < reported < source-native <
// reproduced. A run has exactly one; its default comes from the run itself,
// and only a signed controlled rerun may move it (reproduced or disputed).
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string_view>

#include "objects/json.h"

namespace kistore {

enum class Level { kDisputed = 0, kReported = 1, kSourceNative = 2, kReproduced = 3 };

std::string_view level_name(Level level);  // "disputed", "reported", "source-native", "reproduced"
std::optional<Level> parse_level(std::string_view name);
// "disputed, reported, source-native, reproduced" for messages.
std::string_view level_names();

// source-native when spec.sourceNative is present and spec.status is "passed",
// else reported.
Level default_level(const Json& run_spec);

}  // namespace kistore
