// CommitId: the name of a git commit, 20 bytes (git's SHA-1 object id),
// written as 40 lowercase hex digits.
//
// One type for commit ids across the layers: the index's rules (refs/), the
// git door (store/git/commit_graph.h) and the rooms above it pass commits by
// this value, not by hex text or libgit2's git_oid. It holds no libgit2
// type; store/git/ converts to and from git_oid at the door.
//
// A CommitId made by parse() is exactly what hex() renders: parse accepts 40
// lowercase hex digits and nothing else (no uppercase, no prefix, no
// whitespace), so two ids compare equal exactly when their texts do. SHA-1
// is git's transport id only: kistore's integrity rests on its SHA-256
// digests (objects/digest.h).
//
// Thread-safety: plain value type.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kistore {

class CommitId {
 public:
  static constexpr std::size_t kSize = 20;

  // "<40 lowercase hex>"; nullopt for anything else. The inverse of hex().
  static std::optional<CommitId> parse(std::string_view hex);
  // The id whose kSize bytes start at `bytes` (git's raw form, as in a tree
  // entry or a git_oid).
  static CommitId from_bytes(const std::uint8_t* bytes);

  std::string hex() const;  // 40 lowercase hex digits
  const std::array<std::uint8_t, kSize>& bytes() const { return bytes_; }

  friend bool operator==(const CommitId&, const CommitId&) = default;
  friend auto operator<=>(const CommitId&, const CommitId&) = default;

 private:
  CommitId() = default;
  std::array<std::uint8_t, kSize> bytes_{};
};

}  // namespace kistore

template <>
struct std::hash<kistore::CommitId> {
  std::size_t operator()(const kistore::CommitId& id) const noexcept {
    std::size_t h;
    static_assert(sizeof(h) <= kistore::CommitId::kSize);
    __builtin_memcpy(&h, id.bytes().data(), sizeof(h));
    return h;
  }
};
