#include "refs/layout.h"

#include "objects/error.h"

namespace kistore {

std::string object_path(const Digest& d) {
  std::string hex = d.hex();
  std::string out = "objects/sha256/";
  out.append(hex, 0, 2).append("/").append(hex, 2, 2).append("/").append(hex, 4, 60);
  return out;
}

std::optional<Digest> parse_object_path(std::string_view path) {
  constexpr std::string_view prefix = "objects/sha256/";
  if (path.size() != prefix.size() + 66 || path.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view rest = path.substr(prefix.size());
  if (rest[2] != '/' || rest[5] != '/') return std::nullopt;
  std::string hex;
  hex.append(rest.substr(0, 2)).append(rest.substr(3, 2)).append(rest.substr(6));
  return Digest::parse_hex(hex);
}

std::string metadata_path(const Digest& d) { return "refs/metadata/" + d.hex(); }

std::string group_path(const Digest& key, const Digest& run) {
  return "refs/groups/" + key.hex() + "/" + run.hex();
}

std::string level_path(Level level, const Digest& run) {
  return "refs/levels/" + std::string(level_name(level)) + "/" + run.hex();
}

std::string attestation_path(const Digest& run, const Digest& attestation) {
  return "refs/attestations/" + run.hex() + "/" + attestation.hex();
}

namespace {

// Why `segment` cannot be a path component in a git tree, or "" if it can.
std::string segment_problem(std::string_view segment) {
  if (segment.empty()) return "an empty path segment";
  if (segment == "." || segment == "..") return "the segment \"" + std::string(segment) + "\"";
  // Git refuses names that some file system would take for ".git" (".GIT",
  // ".git.", "git~1"); names starting with ".git" (.gitmodules, .gitattributes)
  // are read by git itself. None can name a source.
  std::string lower;
  for (char c : segment) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  std::string trimmed = lower;
  while (!trimmed.empty() && (trimmed.back() == '.' || trimmed.back() == ' ')) trimmed.pop_back();
  if (lower.starts_with(".git") || trimmed == "git~1")
    return "the segment \"" + std::string(segment) + "\", which git reserves";
  for (unsigned char c : segment)
    if (c < 0x20 || c == 0x7f) return "a control character";
  return "";
}

}  // namespace

std::optional<std::string> source_path(const Json& run_spec, std::string_view where, std::string_view pointer) {
  const Json* native = run_spec.find("sourceNative");
  if (!native || !native->is_object()) return std::nullopt;
  const Json* source = native->find("source");
  const Json* id = native->find("externalId");
  if (!source || !source->is_string() || !id || !id->is_string()) return std::nullopt;
  auto fail = [&](std::string_view member, const std::string& problem) {
    return InvalidInput(std::string(where) + ": " + std::string(pointer) + "/spec/sourceNative/" + std::string(member) +
                        ": expected a path of non-empty segments without \".\", \"..\", \".git\" "
                        "or control characters, found " + problem);
  };
  const std::string& src = source->as_string();
  if (src.find('/') != std::string::npos) throw fail("source", "a \"/\"");
  if (auto p = segment_problem(src); !p.empty()) throw fail("source", p);
  std::string_view rest = id->as_string();
  while (true) {
    std::size_t slash = rest.find('/');
    if (auto p = segment_problem(rest.substr(0, slash)); !p.empty()) throw fail("externalId", p);
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  return "refs/sources/" + src + "/" + id->as_string();
}

}  // namespace kistore
