#include "objects/bundle_line.h"

#include <array>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>

#include "objects/error.h"

namespace kistore {
namespace {

// Roles in bundle order (Bundle::from_documents).
constexpr std::array<std::string_view, 5> kRoles{"run", "protocol", "environment", "workload", "implementation"};

// Nesting the scan accepts inside one member document: well under the
// parser's kMaxDepth, so that parsing a member on its own (one level less
// deep than inside the line) can never accept what the whole line's parse
// refuses.
constexpr int kMaxScanDepth = 48;

// What each thread keeps: documents by their exact text, one table per
// role other than the run (runs are unique). Bounded in entries and bytes of
// text; emptied whole when full, which costs a parse of each document once.
constexpr std::size_t kMaxKept = 256;
constexpr std::size_t kMaxKeptBytes = 4u << 20;
constexpr std::size_t kMaxKeptText = 64u << 10;  // longer documents are parsed every time

struct TextHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

struct Kept {
  std::array<std::unordered_map<std::string, Document, TextHash, std::equal_to<>>, kRoles.size()> by_role;
  std::size_t entries = 0, bytes = 0;

  const Document* find(std::size_t role, std::string_view text) const {
    auto it = by_role[role].find(text);
    return it == by_role[role].end() ? nullptr : &it->second;
  }
  void keep(std::size_t role, std::string_view text, const Document& doc) {
    if (text.size() > kMaxKeptText) return;
    if (entries >= kMaxKept || bytes + text.size() > kMaxKeptBytes) {
      for (auto& table : by_role) table.clear();
      entries = bytes = 0;
    }
    if (by_role[role].emplace(std::string(text), doc).second) ++entries, bytes += text.size();
  }
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void skip_space(std::string_view s, std::size_t& i) {
  while (i < s.size() && is_space(s[i])) ++i;
}

// The end of the object that starts at s[i] ('{'), found by matching
// brackets outside strings; nullopt when it does not end on the line or
// nests deeper than kMaxScanDepth. Whether it is valid JSON is the parser's
// to say.
std::optional<std::size_t> object_end(std::string_view s, std::size_t i) {
  int depth = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      // To the closing quote: the next quote not escaped by an odd run of
      // backslashes before it.
      for (;;) {
        const void* q = std::memchr(s.data() + i + 1, '"', s.size() - i - 1);
        if (!q) return std::nullopt;
        i = static_cast<std::size_t>(static_cast<const char*>(q) - s.data());
        std::size_t backslashes = 0;
        while (s[i - 1 - backslashes] == '\\') ++backslashes;
        if (backslashes % 2 == 0) break;
      }
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxScanDepth) return std::nullopt;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::nullopt;
}

// A role's name at s[i] ('"'), without escapes; its index in kRoles.
std::optional<std::size_t> role_at(std::string_view s, std::size_t& i) {
  if (i >= s.size() || s[i] != '"') return std::nullopt;
  std::size_t close = s.find('"', i + 1);
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view name = s.substr(i + 1, close - i - 1);
  i = close + 1;
  for (std::size_t r = 0; r < kRoles.size(); ++r)
    if (name == kRoles[r]) return r;
  return std::nullopt;  // an unknown member, or a name with escapes
}

// The document whose text is `text`, in role `role`: kept, or parsed and
// validated (and kept). nullopt when it is not a valid document.
std::optional<Document> document_of(std::size_t role, std::string_view text, Kept& kept) {
  if (role != 0)
    if (const Document* d = kept.find(role, text)) return *d;
  try {
    Document doc = Document::from_json(parse_json(text, ""), Location{"", ""});
    if (role != 0) kept.keep(role, text, doc);
    return doc;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<Bundle> parse_bundle_line(std::string_view line) {
  if (line.size() > kMaxInputBytes) return std::nullopt;
  thread_local Kept kept;
  std::array<std::optional<Document>, kRoles.size()> by_role;
  std::size_t i = 0;
  skip_space(line, i);
  if (i >= line.size() || line[i] != '{') return std::nullopt;
  ++i;
  while (true) {
    skip_space(line, i);
    std::optional<std::size_t> role = role_at(line, i);
    if (!role || by_role[*role]) return std::nullopt;  // duplicates: the parser words them
    skip_space(line, i);
    if (i >= line.size() || line[i] != ':') return std::nullopt;
    ++i;
    skip_space(line, i);
    if (i >= line.size() || line[i] != '{') return std::nullopt;
    std::optional<std::size_t> end = object_end(line, i);
    if (!end) return std::nullopt;
    by_role[*role] = document_of(*role, line.substr(i, *end - i), kept);
    if (!by_role[*role]) return std::nullopt;
    i = *end;
    skip_space(line, i);
    if (i < line.size() && line[i] == ',') {
      ++i;
      continue;
    }
    if (i < line.size() && line[i] == '}') break;
    return std::nullopt;
  }
  ++i;
  skip_space(line, i);
  if (i != line.size()) return std::nullopt;
  return Bundle::from_documents(std::move(by_role));
}

}  // namespace kistore
