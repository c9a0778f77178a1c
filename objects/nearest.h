// The nearest of some names to a word that names none of them: what "did you
// mean ...?" suggests for a misspelt command, option or remote.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kistore {

// Optimal string alignment distance: insertions, deletions, substitutions and
// swaps of two neighbours each count one ("pusj" -> "push": 1, "improt" -> "import": 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The name nearest to `word` (the first of equals), or "" when none is near
// enough to be what was meant: one edit for a word of up to `short_size`
// characters, two for a longer one.
std::string nearest_name(std::string_view word, const std::vector<std::string>& names, std::size_t short_size = 4);

}  // namespace kistore
