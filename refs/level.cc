#include "refs/level.h"

#include <array>

namespace kistore {
namespace {
constexpr std::array<std::string_view, 4> kNames{"disputed", "reported", "source-native", "reproduced"};
}

std::string_view level_name(Level level) { return kNames[static_cast<int>(level)]; }

std::optional<Level> parse_level(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<Level>(i);
  return std::nullopt;
}

std::string_view level_names() { return "disputed, reported, source-native, reproduced"; }

Level default_level(const Json& run_spec) {
  const Json* status = run_spec.find("status");
  bool passed = status && status->is_string() && status->as_string() == "passed";
  return passed && run_spec.find("sourceNative") ? Level::kSourceNative : Level::kReported;
}

}  // namespace kistore
