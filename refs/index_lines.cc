#include "refs/index_lines.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <stdexcept>
#include <utility>

#include "objects/error.h"

namespace kistore {

namespace {

constexpr std::string_view kFamilyNames[] = {"metadata", "groups", "levels", "reruns", "attestations", "sources"};

constexpr std::string_view kMetadataMembers[] = {"metadata"};
constexpr std::string_view kGroupMembers[] = {"metric", "statistic", "unit", "value"};
constexpr std::string_view kLevelMembers[] = {"evidence", "level"};
constexpr std::string_view kRerunMembers[] = {"level", "ratio"};
constexpr std::string_view kAttestationMembers[] = {"author", "type"};
constexpr std::string_view kSourceMembers[] = {"externalId", "run", "source"};

// The members of a family's line after "@key", in JCS order.
std::span<const std::string_view> members(Family family) {
  switch (family) {
    case Family::kMetadata: return kMetadataMembers;
    case Family::kGroups: return kGroupMembers;
    case Family::kLevels: return kLevelMembers;
    case Family::kReruns: return kRerunMembers;
    case Family::kAttestations: return kAttestationMembers;
    case Family::kSources: return kSourceMembers;
  }
  throw std::logic_error("unknown index family");
}

// "@key, metric, statistic, unit and value", for messages.
std::string member_list(Family family) {
  std::string out(kKeyMember);
  const auto names = members(family);
  for (std::size_t i = 0; i < names.size(); ++i) out.append(i + 1 == names.size() ? " and " : ", ").append(names[i]);
  return out;
}

// A value as a message shows what it found: JSON text, cut after 80 bytes.
std::string shown(const Json& value) {
  if (value.is_string()) return quoted_excerpt(value.as_string());
  std::string text = canonical(value);
  if (text.size() <= 80) return text;
  std::size_t cut = 80;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "...";
}


bool is_verdict(Level level) { return level == Level::kDisputed || level == Level::kReproduced; }
bool is_attestation_type(std::string_view type) { return type == "note" || type == "reproduction"; }

// Reads the members of one parsed line, throwing Error(kCorruption) that
// names the path, the line number and the member's pointer.
class LineReader {
 public:
  LineReader(std::string_view path, std::size_t line_number, const Json& object)
      : at_(std::string(path) + ":" + std::to_string(line_number) + ": "), object_(object) {}

  Error fail(const std::string& what) const { return Corruption(at_ + what); }
  Error fail(std::string_view member, const std::string& expected, const Json& found) const {
    return fail("/" + pointer_token(member) + ": expected " + expected + ", found " + shown(found));
  }

  const Json& member(std::string_view name) const { return *object_.find(name); }

  const std::string& string(std::string_view name, std::string_view expected = "a string") const {
    const Json& v = member(name);
    if (!v.is_string()) throw fail(name, std::string(expected), v);
    return v.as_string();
  }
  // A string that separates fields of a sources key: no U+0000.
  const std::string& text(std::string_view name) const {
    const std::string& s = string(name, "a string without U+0000");
    if (s.find('\0') != std::string::npos) throw fail(name, "a string without U+0000", member(name));
    return s;
  }
  Digest digest(std::string_view name) const {
    const Json& v = member(name);
    std::optional<Digest> d;
    if (v.is_string()) d = Digest::parse(v.as_string());
    if (!d) throw fail(name, "a digest \"sha256:<64 lowercase hex>\"", v);
    return *d;
  }
  Level verdict(std::string_view name) const {
    const Json& v = member(name);
    std::optional<Level> level;
    if (v.is_string()) level = parse_level(v.as_string());
    if (!level || !is_verdict(*level)) throw fail(name, "\"disputed\" or \"reproduced\"", v);
    return *level;
  }
  double number(std::string_view name, std::string_view expected = "a number") const {
    const Json& v = member(name);
    if (!v.is_number()) throw fail(name, std::string(expected), v);
    return v.as_number();
  }

 private:
  std::string at_;
  const Json& object_;
};

// The first and second digests of a 128-digit key.
Digest first_digest(std::string_view key) { return *Digest::parse_hex(key.substr(0, 64)); }
Digest second_digest(std::string_view key) { return *Digest::parse_hex(key.substr(64, 64)); }

std::optional<Measurement> read_primary(const LineReader& in) {
  if (std::all_of(std::begin(kGroupMembers), std::end(kGroupMembers),
                  [&](std::string_view name) { return in.member(name).is_null(); }))
    return std::nullopt;
  const std::string either = " (metric, statistic, unit and value are all null, or none is)";
  Measurement m;
  m.metric = in.string("metric", "a string" + either);
  m.statistic = in.string("statistic", "a string" + either);
  m.unit = in.string("unit", "a string" + either);
  m.value = in.number("value", "a number" + either);
  return m;
}

IndexFact read_fact(Family family, const std::string& key, const LineReader& in) {
  switch (family) {
    case Family::kMetadata: {
      const Json& metadata = in.member("metadata");
      if (!metadata.is_object()) throw in.fail("metadata", "a JSON object", metadata);
      return MetadataFact{*Digest::parse_hex(key), canonical(metadata)};
    }
    case Family::kGroups:
      return GroupFact{first_digest(key), second_digest(key), read_primary(in)};
    case Family::kLevels:
      return LevelFact{*Digest::parse_hex(key), in.verdict("level"), in.digest("evidence")};
    case Family::kReruns:
      return RerunFact{first_digest(key), second_digest(key), in.verdict("level"), in.number("ratio")};
    case Family::kAttestations: {
      const std::string& type = in.string("type", "\"note\" or \"reproduction\"");
      if (!is_attestation_type(type)) throw in.fail("type", "\"note\" or \"reproduction\"", in.member("type"));
      return AttestationFact{first_digest(key), second_digest(key), in.string("author"), type};
    }
    case Family::kSources: {
      SourceFact fact{in.text("source"), in.text("externalId"), in.digest("run")};
      const std::string expected = source_key(fact.source, fact.external_id);
      if (key != expected)
        throw in.fail("/@key: expected the SHA-256 of source, a NUL and externalId, " + expected + ", found " + key);
      return fact;
    }
  }
  throw std::logic_error("unknown index family");
}

// The line's object written as JCS writes it: "@key" first, then the
// family's members, whose names are already in JCS order (UTF-16 code
// units: '@' < "author" < "evidence" < "externalId" < "level" < "metadata"
// < "metric" < "ratio" < "run" < "source" < "statistic" < "type" < "unit"
// < "value", within each family).
void write_line_object(const IndexFact& fact, std::string& out) {
  auto check = [](bool ok, const char* what) {
    if (!ok) throw std::logic_error(std::string("cannot render an index line: ") + what);
  };
  auto member = [&](std::string_view name) { out.append(",\"").append(name).append("\":"); };
  auto string_or_null = [&](const std::string* s) {
    if (s) write_json_string(*s, out);
    else out.append("null");
  };
  out.append("{\"@key\":\"").append(fact_key(fact)).push_back('"');
  std::visit(
      [&](const auto& f) {
        using T = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<T, MetadataFact>) {
          check(f.metadata.starts_with('{'), "metadata that is not an object");
          member("metadata");
          out.append(f.metadata);
        } else if constexpr (std::is_same_v<T, GroupFact>) {
          const Measurement* m = f.primary ? &*f.primary : nullptr;
          check(!m || std::isfinite(m->value), "a measurement that is not finite");
          member("metric");
          string_or_null(m ? &m->metric : nullptr);
          member("statistic");
          string_or_null(m ? &m->statistic : nullptr);
          member("unit");
          string_or_null(m ? &m->unit : nullptr);
          member("value");
          out.append(m ? format_number(m->value) : "null");
        } else if constexpr (std::is_same_v<T, LevelFact>) {
          check(is_verdict(f.level), "a level other than disputed or reproduced");
          member("evidence");
          write_json_string(f.evidence.str(), out);
          member("level");
          write_json_string(level_name(f.level), out);
        } else if constexpr (std::is_same_v<T, RerunFact>) {
          check(is_verdict(f.verdict), "a verdict other than disputed or reproduced");
          check(std::isfinite(f.ratio), "a ratio that is not finite");
          member("level");
          write_json_string(level_name(f.verdict), out);
          member("ratio");
          out.append(format_number(f.ratio));
        } else if constexpr (std::is_same_v<T, AttestationFact>) {
          check(is_attestation_type(f.type), "an attestation type other than note or reproduction");
          member("author");
          write_json_string(f.author, out);
          member("type");
          write_json_string(f.type, out);
        } else {
          check(f.source.find('\0') == std::string::npos && f.external_id.find('\0') == std::string::npos,
                "a source or externalId holding U+0000");
          member("externalId");
          write_json_string(f.external_id, out);
          member("run");
          write_json_string(f.run.str(), out);
          member("source");
          write_json_string(f.source, out);
        }
      },
      fact);
  out.push_back('}');
}

// The quick reading of a line in the shape render_line writes when every
// string outside a metadata object is printable ASCII without '"' or '\\':
// the fact it holds, or nullopt for any other line (which
// parse_line then reads, and names its fault). A fact it gives holds only
// documented values and renders to the line byte for byte (read_line checks),
// so it is the fact parse_line would give.
class QuickLine {
 public:
  explicit QuickLine(std::string_view line) : s_(line) {}

  std::optional<IndexFact> read(Family family) {
    const std::size_t digits = key_digits(family);
    if (!take("{\"@key\":")) return std::nullopt;
    const auto key = string();
    if (!key || key->size() != digits || !lowercase_hex(*key)) return std::nullopt;
    switch (family) {
      case Family::kMetadata: {
        // {"@key":"<hex>","metadata":{...}}\n: an object in its RFC 8785
        // form, checked as such without building its value.
        if (!at_member("metadata") || !s_.ends_with("}\n") || s_.size() < at_ + 2) return std::nullopt;
        const std::string_view metadata = s_.substr(at_, s_.size() - 2 - at_);
        if (!metadata.starts_with('{') || !is_canonical_json(metadata)) return std::nullopt;
        return MetadataFact{*Digest::parse_hex(*key), std::string(metadata)};
      }
      case Family::kGroups: {
        const GroupFact fact{first_digest(*key), second_digest(*key), {}};
        const std::size_t members = at_;
        if (at_member("metric") && take("null")) {
          if (at_member("statistic") && take("null") && at_member("unit") && take("null") && at_member("value") &&
              take("null") && end())
            return fact;
          return std::nullopt;
        }
        at_ = members;  // a measurement: read its members from the first
        Measurement m;
        if (!at_member("metric") || !string_into(m.metric) || !at_member("statistic") || !string_into(m.statistic) ||
            !at_member("unit") || !string_into(m.unit) || !at_member("value"))
          return std::nullopt;
        const auto value = number();
        if (!value || !end()) return std::nullopt;
        m.value = *value;
        return GroupFact{fact.key, fact.run, std::move(m)};
      }
      case Family::kLevels: {
        if (!at_member("evidence")) return std::nullopt;
        const auto evidence = string();
        if (!evidence) return std::nullopt;
        const auto d = Digest::parse(*evidence);
        const auto level = at_member("level") ? verdict() : std::nullopt;
        if (!d || !level || !end()) return std::nullopt;
        return LevelFact{*Digest::parse_hex(*key), *level, *d};
      }
      case Family::kReruns: {
        const auto level = at_member("level") ? verdict() : std::nullopt;
        const auto ratio = level && at_member("ratio") ? number() : std::nullopt;
        if (!ratio || !end()) return std::nullopt;
        return RerunFact{first_digest(*key), second_digest(*key), *level, *ratio};
      }
      case Family::kAttestations: {
        AttestationFact fact{first_digest(*key), second_digest(*key), {}, {}};
        if (!at_member("author") || !string_into(fact.author) || !at_member("type") || !string_into(fact.type) ||
            !is_attestation_type(fact.type) || !end())
          return std::nullopt;
        return fact;
      }
      case Family::kSources: {
        std::string external_id, source;
        if (!at_member("externalId") || !string_into(external_id) || !at_member("run")) return std::nullopt;
        const auto run = string();
        const auto d = run ? Digest::parse(*run) : std::nullopt;
        if (!d || !at_member("source") || !string_into(source) || !end()) return std::nullopt;
        return SourceFact{std::move(source), std::move(external_id), *d};
      }
    }
    return std::nullopt;
  }

 private:
  bool take(std::string_view text) {
    if (s_.substr(at_, text.size()) != text) return false;
    at_ += text.size();
    return true;
  }
  bool at_member(std::string_view name) { return take(",\"") && take(name) && take("\":"); }
  bool end() { return take("}\n") && at_ == s_.size(); }
  // A string of printable ASCII other than '"' and '\\', which JCS writes as it is.
  std::optional<std::string_view> string() {
    if (!take("\"")) return std::nullopt;
    const std::size_t start = at_;
    for (; at_ < s_.size() && s_[at_] != '"'; ++at_)
      if (s_[at_] < 0x20 || s_[at_] > 0x7e || s_[at_] == '\\') return std::nullopt;
    if (at_ == s_.size()) return std::nullopt;
    return s_.substr(start, at_++ - start);
  }
  bool string_into(std::string& out) {
    const auto s = string();
    if (s) out.assign(*s);
    return s.has_value();
  }
  std::optional<Level> verdict() {
    const auto s = string();
    const auto level = s ? parse_level(*s) : std::nullopt;
    if (!level || !is_verdict(*level)) return std::nullopt;
    return level;
  }
  std::optional<double> number() {
    const std::size_t start = at_;
    while (at_ < s_.size() && std::string_view("-+.eE0123456789").find(s_[at_]) != std::string_view::npos) ++at_;
    double d = 0;
    const auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + at_, d);
    if (ec != std::errc() || end != s_.data() + at_ || !std::isfinite(d)) return std::nullopt;
    return d;
  }

  std::string_view s_;
  std::size_t at_ = 0;
};

}  // namespace

// Eight characters at a time (a pull checks every key of every changed
// index line, 64 or 128 digits each): for bytes under 0x80, adding 0x80 - x
// sets a byte's high bit exactly when the byte is at least x, and no sum
// carries into the next byte, so a byte is a digit when it is at least '0'
// and not at least '9' + 1, a letter when at least 'a' and not at least 'f' + 1.
bool lowercase_hex(std::string_view s) {
  if (s.empty()) return false;
  constexpr std::uint64_t kOnes = 0x0101010101010101u, kHigh = 0x8080808080808080u;
  auto at_least = [](std::uint64_t w, unsigned char x) { return (w + kOnes * (0x80u - x)) & kHigh; };
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (w & kHigh) return false;
    const std::uint64_t digit = at_least(w, '0') & ~at_least(w, '9' + 1);
    const std::uint64_t letter = at_least(w, 'a') & ~at_least(w, 'f' + 1);
    if ((digit | letter) != kHigh) return false;
  }
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string_view family_name(Family family) { return kFamilyNames[static_cast<std::size_t>(family)]; }

std::optional<Family> parse_family(std::string_view name) {
  for (Family f : kFamilies)
    if (family_name(f) == name) return f;
  return std::nullopt;
}

std::size_t key_digits(Family family) {
  return family == Family::kGroups || family == Family::kReruns || family == Family::kAttestations ? 128 : 64;
}

Family family_of(const IndexFact& fact) { return static_cast<Family>(fact.index()); }

std::string source_key(std::string_view source, std::string_view external_id) {
  std::string bytes(source);
  bytes.push_back('\0');
  bytes.append(external_id);
  return Digest::of(bytes).hex();
}

std::string fact_key(const IndexFact& fact) {
  return std::visit(
      [](const auto& f) -> std::string {
        using T = std::decay_t<decltype(f)>;
        if constexpr (std::is_same_v<T, MetadataFact>) return f.document.hex();
        else if constexpr (std::is_same_v<T, GroupFact>) return f.key.hex() + f.run.hex();
        else if constexpr (std::is_same_v<T, LevelFact>) return f.run.hex();
        else if constexpr (std::is_same_v<T, RerunFact>) return f.run.hex() + f.rerun.hex();
        else if constexpr (std::is_same_v<T, AttestationFact>) return f.run.hex() + f.attestation.hex();
        else return source_key(f.source, f.external_id);
      },
      fact);
}

std::string render_line(const IndexFact& fact) {
  std::string out;
  out.reserve(256);
  write_line_object(fact, out);
  out.push_back('\n');
  return out;
}

std::optional<IndexFact> read_plain_line(Family family, std::string_view line) { return QuickLine(line).read(family); }

IndexFact parse_line(Family family, std::string_view line, std::string_view path, std::size_t line_number) {
  // Most lines are in the plain shape QuickLine reads without building a
  // JSON value; what it gives is checked against the line as the full
  // reading below checks it, and anything else is read in full.
  if (std::optional<IndexFact> quick = read_plain_line(family, line)) {
    std::string rendered;
    rendered.reserve(line.size());
    write_line_object(*quick, rendered);
    rendered.push_back('\n');
    if (rendered == line) return std::move(*quick);
  }
  const Json empty = Json::object();
  const LineReader at(path, line_number, empty);
  if (line.empty()) throw at.fail("expected a line ending in \"\\n\", found the end of the file");
  if (line.back() != '\n') throw at.fail("expected a line ending in \"\\n\", found the end of the file after " +
                                         quoted_excerpt(line.substr(line.size() > 20 ? line.size() - 20 : 0)));
  const std::string_view body = line.substr(0, line.size() - 1);
  if (body.find('\n') != std::string_view::npos) throw at.fail("expected one line, found a \"\\n\" inside it");
  Json object;
  try {
    object = parse_json(body, path, line_number);
  } catch (const Error& e) {
    throw Corruption(e.what());
  }
  if (!object.is_object()) throw at.fail("expected a JSON object, found " + shown(object));
  const auto names = members(family);
  for (const auto& [name, value] : object.as_object())
    if (name != kKeyMember && std::find(names.begin(), names.end(), name) == names.end())
      throw at.fail("expected only the members " + member_list(family) + " in a " + std::string(family_name(family)) +
                    " line, found " + quoted_excerpt(name));
  const Json* key = object.find(kKeyMember);
  if (!key) throw at.fail("expected the member \"@key\", found none");
  const std::size_t digits = key_digits(family);
  if (!key->is_string() || key->as_string().size() != digits || !lowercase_hex(key->as_string()))
    throw at.fail(std::string(kKeyMember), std::to_string(digits) + " lowercase hex digits", *key);
  for (std::string_view name : names)
    if (!object.find(name))
      throw at.fail("expected the member " + quoted_excerpt(name) + " (a " + std::string(family_name(family)) +
                    " line has " + member_list(family) + "), found none");
  IndexFact fact = read_fact(family, key->as_string(), LineReader(path, line_number, object));
  const std::string expected = render_line(fact);
  if (expected != line) {
    const std::size_t at_byte = std::mismatch(expected.begin(), expected.end(), line.begin(), line.end()).first -
                                expected.begin();
    throw at.fail("expected the RFC 8785 form of the line's object, which differs from it at column " +
                  std::to_string(at_byte + 1) + ": expected " + quoted_excerpt(expected.substr(at_byte), 24) +
                  ", found " + quoted_excerpt(line.substr(at_byte), 24));
  }
  return fact;
}

void for_each_index_line(Family family, std::string_view path, std::string_view prefix, std::string_view bytes,
                         const std::function<void(IndexFact&&, std::string_view key)>& fn) {
  if (bytes.empty()) throw Corruption(std::string(path) + ": expected at least one line, found an empty file");
  const std::size_t digits = key_digits(family);
  const std::size_t key_at = kKeyMember.size() + 5;  // {"@key":"
  std::string_view previous;
  std::size_t number = 0;
  for (std::size_t start = 0; start < bytes.size();) {
    ++number;
    const std::size_t end = bytes.find('\n', start);
    const std::string_view line = bytes.substr(start, end == std::string_view::npos ? end : end - start + 1);
    start += line.size();
    IndexFact fact = parse_line(family, line, path, number);
    // The line is render_line(fact): its key is fact_key(fact), as written.
    const std::string_view key = line.substr(key_at, digits);
    auto fail = [&](const std::string& what) {
      return Corruption(std::string(path) + ":" + std::to_string(number) + ": " + what);
    };
    if (!key.starts_with(prefix))
      throw fail("/@key: expected a key starting with " + std::string(prefix.empty() ? "anything" : prefix) +
                 " (the digits its file's path stands for), found " + std::string(key));
    if (number > 1 && key == previous)
      throw fail("/@key: expected each key once, found " + std::string(key) + " again (line " +
                 std::to_string(number - 1) + ")");
    if (number > 1 && key < previous)
      throw fail("/@key: expected keys in ascending order, found " + std::string(key) + " after line " +
                 std::to_string(number - 1) + "'s " + std::string(previous));
    previous = key;
    fn(std::move(fact), key);
  }
}

std::vector<IndexFact> parse_index_file(Family family, std::string_view path, std::string_view prefix,
                                        std::string_view bytes) {
  std::vector<IndexFact> facts;
  for_each_index_line(family, path, prefix, bytes,
                      [&](IndexFact&& fact, std::string_view) { facts.push_back(std::move(fact)); });
  return facts;
}

}  // namespace kistore
