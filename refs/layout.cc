#include "refs/layout.h"

#include <algorithm>
#include <utility>

#include "objects/error.h"

namespace kistore {

std::string format_name(Format format) { return "format " + std::to_string(static_cast<int>(format)); }

std::optional<Format> parse_format_bytes(std::string_view bytes) {
  if (bytes == kFormat2Bytes) return Format::k2;
  if (bytes == kFormat3Bytes) return Format::k3;
  return std::nullopt;
}

std::string unknown_format_problem(std::string_view bytes) {
  std::string shown;
  for (char c : bytes.substr(0, 40)) {
    if (c == '\n') shown += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) shown += '?';
    else shown += c;
  }
  if (bytes.size() > 40) shown += "...";
  return "FORMAT holds \"" + shown + "\", a format this kistore cannot read (it reads formats 1 to 3, " +
         "whose FORMAT is \"kistore 3\\n\" in format 3); use a newer kistore, one that reads it";
}

std::string fanout(const Digest& d) {
  std::string hex = d.hex();
  std::string out;
  out.reserve(66);
  out.append(hex, 0, 2).append("/").append(hex, 2, 2).append("/").append(hex, 4, 60);
  return out;
}

std::optional<Digest> parse_fanout(std::string_view rest) {
  if (rest.size() != 66 || rest[2] != '/' || rest[5] != '/') return std::nullopt;
  std::string hex;
  hex.append(rest.substr(0, 2)).append(rest.substr(3, 2)).append(rest.substr(6));
  return Digest::parse_hex(hex);
}

namespace {

constexpr std::string_view kObjectsDir = "objects/sha256/";
constexpr std::string_view kMetadataDir = "refs/metadata/";
constexpr std::string_view kLevelsDir = "refs/levels/";
constexpr std::string_view kAttestationsDir = "refs/attestations/";
constexpr std::string_view kSourcesDir = "refs/sources/";

// `path` without `prefix`, or nullopt when it does not start so.
std::optional<std::string_view> after(std::string_view path, std::string_view prefix) {
  if (!path.starts_with(prefix)) return std::nullopt;
  return path.substr(prefix.size());
}

// How a digest is named below an index folder: fanned out in format 2, flat
// 64 hex in format 1.
std::string digest_name(Format f, const Digest& d) { return f == Format::k1 ? d.hex() : fanout(d); }
std::size_t digest_name_size(Format f) { return f == Format::k1 ? 64 : 66; }
std::optional<Digest> parse_digest_name(Format f, std::string_view name) {
  return f == Format::k1 ? Digest::parse_hex(name) : parse_fanout(name);
}

// "<digest name>/<64 hex>": a digest named as the format names it, a slash,
// and a flat digest, nothing else.
std::optional<std::pair<Digest, Digest>> parse_pair(Format f, std::string_view rest) {
  const std::size_t first = digest_name_size(f);
  if (rest.size() != first + 1 + 64 || rest[first] != '/') return std::nullopt;
  auto a = parse_digest_name(f, rest.substr(0, first));
  auto b = Digest::parse_hex(rest.substr(first + 1));
  if (!a || !b) return std::nullopt;
  return std::pair{*a, *b};
}

}  // namespace

std::string object_path(const Digest& d) { return std::string(kObjectsDir) + fanout(d); }

std::optional<Digest> parse_object_path(std::string_view path) {
  auto rest = after(path, kObjectsDir);
  if (!rest) return std::nullopt;
  return parse_fanout(*rest);
}

std::string dictionary_path(std::uint32_t id) { return std::string(kDictionariesDir) + "/" + std::to_string(id); }

std::optional<std::uint32_t> parse_dictionary_path(Format f, std::string_view path) {
  if (f == Format::k1 || !path.starts_with(kDictionariesDir) || path.size() <= kDictionariesDir.size() + 1 ||
      path[kDictionariesDir.size()] != '/')
    return std::nullopt;
  std::string_view name = path.substr(kDictionariesDir.size() + 1);
  // 1 to 4294967295 in decimal, no sign, no leading zero: what to_string renders.
  if (name.size() > 10 || name[0] == '0') return std::nullopt;
  std::uint64_t id = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (id > 0xFFFFFFFFu) return std::nullopt;
  return static_cast<std::uint32_t>(id);
}

std::string metadata_path(Format f, const Digest& d) { return std::string(kMetadataDir) + digest_name(f, d); }

std::optional<Digest> parse_metadata_path(Format f, std::string_view path) {
  auto rest = after(path, kMetadataDir);
  if (!rest) return std::nullopt;
  return parse_digest_name(f, *rest);
}

std::string group_dir(Format f, const Digest& key) { return std::string(kGroupsDir) + "/" + digest_name(f, key); }

std::string group_path(Format f, const Digest& key, const Digest& run) { return group_dir(f, key) + "/" + run.hex(); }

std::optional<GroupEntryPath> parse_group_path(Format f, std::string_view path) {
  auto rest = after(path, std::string(kGroupsDir) + "/");
  if (!rest) return std::nullopt;
  auto pair = parse_pair(f, *rest);
  if (!pair) return std::nullopt;
  return GroupEntryPath{pair->first, pair->second};
}

std::string level_dir(Level level) { return std::string(kLevelsDir) + std::string(level_name(level)); }

std::string level_path(Format f, Level level, const Digest& run) { return level_dir(level) + "/" + digest_name(f, run); }

std::optional<LevelEntryPath> parse_level_path(Format f, std::string_view path) {
  auto rest = after(path, kLevelsDir);
  if (!rest) return std::nullopt;
  std::size_t slash = rest->find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto level = parse_level(rest->substr(0, slash));
  auto run = parse_digest_name(f, rest->substr(slash + 1));
  if (!level || !run) return std::nullopt;
  return LevelEntryPath{*level, *run};
}

std::string reruns_dir(const Digest& run) { return std::string(kRerunsDir) + "/" + fanout(run); }

std::string rerun_path(const Digest& run, const Digest& rerun) { return reruns_dir(run) + "/" + rerun.hex(); }

std::optional<RerunEntryPath> parse_rerun_path(Format f, std::string_view path) {
  if (f == Format::k1) return std::nullopt;
  auto rest = after(path, std::string(kRerunsDir) + "/");
  if (!rest) return std::nullopt;
  auto pair = parse_pair(f, *rest);
  if (!pair) return std::nullopt;
  return RerunEntryPath{pair->first, pair->second};
}

std::string attestations_dir(Format f, const Digest& run) { return std::string(kAttestationsDir) + digest_name(f, run); }

std::string attestation_path(Format f, const Digest& run, const Digest& attestation) {
  return attestations_dir(f, run) + "/" + attestation.hex();
}

std::optional<AttestationEntryPath> parse_attestation_path(Format f, std::string_view path) {
  auto rest = after(path, kAttestationsDir);
  if (!rest) return std::nullopt;
  auto pair = parse_pair(f, *rest);
  if (!pair) return std::nullopt;
  return AttestationEntryPath{pair->first, pair->second};
}

namespace {

// Why `segment` cannot be a path component in a git tree, or "" if it can.
// Git reads longer names, but libgit2 and kistore's tree reader stop at 64 KiB
// and file systems at 255 bytes: a longer one would make a tree that a clone
// cannot check out or a later read refuses.
constexpr std::size_t kMaxSegmentBytes = 255;
// refs/sources/<source>/ and at most this many externalId segments keep every
// path within the 16 levels a store's tree may have.
constexpr std::size_t kMaxExternalIdSegments = 13;

// The length of the code point that `s` starts with if HFS+ ignores it in a
// name, as git's is_hfs_dotgit does (U+200C-U+200F, U+202A-U+202E,
// U+206A-U+206F, U+FEFF), else 0.
std::size_t hfs_ignorable(std::string_view s) {
  if (s.size() < 3) return 0;
  const auto a = static_cast<unsigned char>(s[0]), b = static_cast<unsigned char>(s[1]),
             c = static_cast<unsigned char>(s[2]);
  const bool ignorable = (a == 0xE2 && b == 0x80 && ((c >= 0x8C && c <= 0x8F) || (c >= 0xAA && c <= 0xAE))) ||
                         (a == 0xE2 && b == 0x81 && c >= 0xAA && c <= 0xAF) || (a == 0xEF && b == 0xBB && c == 0xBF);
  return ignorable ? 3 : 0;
}

std::string segment_problem(std::string_view segment) {
  if (segment.empty()) return "an empty path segment";
  if (segment.size() > kMaxSegmentBytes)
    return "a segment of " + std::to_string(segment.size()) + " bytes (at most " +
           std::to_string(kMaxSegmentBytes) + ")";
  if (segment == "." || segment == "..") return "the segment \"" + std::string(segment) + "\"";
  // Git refuses names that some file system would take for ".git" (".GIT",
  // ".git.", "git~1"; on HFS+, which ignores some invisible code points,
  // ".g\u200cit"; on NTFS, where "\\" separates folders, "a\\.git");
  // names starting with ".git" (.gitmodules, .gitattributes) are read by git
  // itself. None can name a source (git fsck calls them hasDotgit).
  std::string lower;
  for (std::size_t i = 0; i < segment.size();) {
    if (std::size_t n = hfs_ignorable(segment.substr(i))) {
      i += n;
      continue;
    }
    const char c = segment[i++];
    lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  }
  for (std::string_view rest = lower;;) {
    const std::size_t backslash = rest.find('\\');
    std::string_view part = rest.substr(0, backslash);
    std::string_view trimmed = part;
    while (!trimmed.empty() && (trimmed.back() == '.' || trimmed.back() == ' ')) trimmed.remove_suffix(1);
    if (part.starts_with(".git") || trimmed == "git~1")
      return "the segment \"" + std::string(segment) + "\", which git reserves";
    if (backslash == std::string_view::npos) break;
    rest = rest.substr(backslash + 1);
  }
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
                        ": expected a path of at most " + std::to_string(kMaxExternalIdSegments) +
                        " non-empty segments of at most " + std::to_string(kMaxSegmentBytes) +
                        " bytes, without \".\", \"..\", \".git\" or control characters, found " + problem);
  };
  const std::string& src = source->as_string();
  if (src.find('/') != std::string::npos) throw fail("source", "a \"/\"");
  if (auto p = segment_problem(src); !p.empty()) throw fail("source", p);
  std::string_view rest = id->as_string();
  for (std::size_t segments = 1;; ++segments) {
    if (segments > kMaxExternalIdSegments)
      throw fail("externalId", "more than " + std::to_string(kMaxExternalIdSegments) + " segments");
    std::size_t slash = rest.find('/');
    if (auto p = segment_problem(rest.substr(0, slash)); !p.empty()) throw fail("externalId", p);
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  return std::string(kSourcesDir) + src + "/" + id->as_string();
}

std::optional<SourceEntryPath> parse_source_path(std::string_view path) {
  auto rest = after(path, kSourcesDir);
  if (!rest) return std::nullopt;
  std::size_t slash = rest->find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string_view source = rest->substr(0, slash), id = rest->substr(slash + 1);
  if (!segment_problem(source).empty()) return std::nullopt;
  if (std::count(id.begin(), id.end(), '/') >= static_cast<std::ptrdiff_t>(kMaxExternalIdSegments)) return std::nullopt;
  for (std::string_view tail = id;;) {
    std::size_t next = tail.find('/');
    if (!segment_problem(tail.substr(0, next)).empty()) return std::nullopt;
    if (next == std::string_view::npos) break;
    tail = tail.substr(next + 1);
  }
  return SourceEntryPath{std::string(source), std::string(id)};
}

}  // namespace kistore
