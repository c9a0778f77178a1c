// Parsing JSON text into Json values (objects/json.h), strictly enough for
// RFC 8785: UTF-8 validated, duplicate names and lone surrogates refused,
// numbers as doubles, positions named by line and column.
#include "objects/json.h"
#include "objects/json_large.h"

#include <rapidjson/error/error.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "objects/error.h"

namespace kistore {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// ---------------------------------------------------------------------------
// Locating and describing input positions

// Validity of the UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates,
// nothing above U+10FFFF). For an invalid one, `length` runs up to and including
// the first offending byte, or to the end of the input when it is cut short.
struct Utf8Sequence {
  std::size_t length;
  bool valid;
  bool truncated = false;
};

Utf8Sequence check_utf8(std::string_view s, std::size_t i) {
  const auto lead = static_cast<unsigned char>(s[i]);
  if (lead < 0x80) return {1, true};
  std::size_t tail;
  unsigned char lo = 0x80, hi = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    tail = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    tail = 2;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    tail = 3;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return {1, false};
  }
  for (std::size_t k = 1; k <= tail; ++k) {
    if (i + k >= s.size()) return {s.size() - i, false, true};
    const auto c = static_cast<unsigned char>(s[i + k]);
    if (c < lo || c > hi) return {k + 1, false};
    lo = 0x80;
    hi = 0xBF;
  }
  return {tail + 1, true};
}

std::string hex_byte(unsigned char c) {
  return std::string("0x") + kHexDigits[c >> 4] + kHexDigits[c & 15];
}

// What a message says was found at `offset`: the character there, quoted, or a
// name for what cannot be shown as it is.
std::string describe(std::string_view text, std::size_t offset) {
  if (offset >= text.size()) return "end of input";
  const auto c = static_cast<unsigned char>(text[offset]);
  if (c < 0x20 || c == 0x7F) {
    std::string s = "control character U+00";
    s += "0123456789ABCDEF"[c >> 4];
    s += "0123456789ABCDEF"[c & 15];
    return s;
  }
  if (c == '\'') return "\"'\"";
  const Utf8Sequence seq = check_utf8(text, offset);
  if (seq.valid) {
    if (c < 0x80) return "'" + std::string(1, static_cast<char>(c)) + "'";
    // Name the code point too: U+FEFF (a byte order mark), U+00A0 and the like
    // look like nothing, or like a space, when printed.
    char32_t cp = c & (0x7F >> seq.length);
    for (std::size_t k = 1; k < seq.length; ++k) cp = cp << 6 | (text[offset + k] & 0x3F);
    char hex[8];
    const auto r = std::to_chars(hex, hex + sizeof hex, static_cast<unsigned>(cp), 16);
    std::string name(hex, r.ptr);
    for (char& h : name) h = static_cast<char>(std::toupper(static_cast<unsigned char>(h)));
    if (name.size() < 4) name.insert(0, 4 - name.size(), '0');
    return "'" + std::string(text.substr(offset, seq.length)) + "' (U+" + name + ")";
  }
  if (seq.length == 1) return "invalid UTF-8 byte " + hex_byte(c);
  std::string s = seq.truncated ? "truncated UTF-8 sequence" : "invalid UTF-8 sequence";
  for (std::size_t k = 0; k < seq.length; ++k) {
    s += ' ';
    s += hex_byte(static_cast<unsigned char>(text[offset + k]));
  }
  return s;
}

// A slice of input quoted for a message, cut short when long.
std::string excerpt(std::string_view text) {
  constexpr std::size_t kMax = 40;
  if (text.size() <= kMax) return std::string(text);
  return std::string(text.substr(0, kMax)) + "...";
}

class Locator {
 public:
  Locator(std::string_view text, std::string_view source, std::size_t first_line)
      : text_(text), source_(source), first_line_(first_line) {}

  // "<source>:<line>:<column>: ". Columns count bytes from 1, not characters:
  // bytes are well defined even where the text is not valid UTF-8, which is
  // where some of these errors are.
  std::string at(std::size_t offset) const {
    offset = std::min(offset, text_.size());
    std::size_t line = first_line_;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < offset; ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    return std::string(source_) + ":" + std::to_string(line) + ":" +
           std::to_string(offset - line_start + 1) + ": ";
  }

 private:
  std::string_view text_;
  std::string_view source_;
  std::size_t first_line_;
};

// ---------------------------------------------------------------------------
// Parsing

// A bounded input for RapidJSON: a string_view need not end in NUL. Peek()
// yields '\0' at the end, which is how RapidJSON sees the end; an embedded NUL
// therefore also looks like the end, and parse_json checks that everything was
// read. StreamTraits keeps copyOptimization off, so the Reader advances this
// object itself and the handler can read the position of the token it is told
// about from Tell().
class TextStream {
 public:
  using Ch = char;
  explicit TextStream(std::string_view text)
      : begin_(text.data()), pos_(text.data()), end_(text.data() + text.size()) {}
  Ch Peek() const { return pos_ != end_ ? *pos_ : '\0'; }
  Ch Take() { return pos_ != end_ ? *pos_++ : '\0'; }
  std::size_t Tell() const { return static_cast<std::size_t>(pos_ - begin_); }
  // The write half of RapidJSON's stream concept serves in-situ parsing only.
  Ch* PutBegin() { RAPIDJSON_ASSERT(false); return nullptr; }
  void Put(Ch) { RAPIDJSON_ASSERT(false); }
  void Flush() { RAPIDJSON_ASSERT(false); }
  std::size_t PutEnd(Ch*) { RAPIDJSON_ASSERT(false); return 0; }

  // Past the blanks JSON allows between tokens (' ', '\t', '\n', '\r'):
  // eight spaces at a time through an indentation, then byte by byte.
  void SkipBlanks() {
    constexpr std::uint64_t kSpaces = 0x2020202020202020;
    while (pos_ != end_) {
      std::uint64_t word;
      while (end_ - pos_ >= 8 && (std::memcpy(&word, pos_, 8), word == kSpaces)) pos_ += 8;
      if (pos_ == end_ || (*pos_ != ' ' && *pos_ != '\n' && *pos_ != '\r' && *pos_ != '\t')) return;
      ++pos_;
    }
  }

 private:
  const char* begin_;
  const char* pos_;
  const char* end_;
};

// Found by argument-dependent lookup from RapidJSON's reader, in place of its
// SkipWhitespace template, which goes through Peek and Take a character at a
// time: an indented file (nvbench's) is a third blanks.
void SkipWhitespace(TextStream& in) { in.SkipBlanks(); }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

unsigned hex4(std::string_view s) {
  unsigned v = 0;
  for (char c : s.substr(0, 4)) {
    v <<= 4;
    if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
  }
  return v;
}

// RapidJSON decodes a lone low surrogate escape ("\udc00") into the bytes of a
// surrogate code point (ED B0..BF) instead of rejecting it; a lone high one it
// does reject. Raw surrogate bytes in the input fail its UTF-8 validation, so
// these bytes in a decoded string can only come from such an escape.
bool has_surrogate(const char* s, std::size_t n) {
  const char* end = s + n;
  for (const char* p = s;
       (p = static_cast<const char*>(std::memchr(p, '\xED', static_cast<std::size_t>(end - p))));
       ++p) {
    if (end - p >= 2 && static_cast<unsigned char>(p[1]) >= 0xA0) return true;
  }
  return false;
}

// Decimal exponent of a JSON number's leading significant digit (saturated).
// std::from_chars reports overflow and underflow alike; the two lie hundreds of
// decades apart, so this exponent's sign tells them apart.
long decimal_exponent(std::string_view num) {
  std::size_t i = num.empty() || num[0] != '-' ? 0 : 1;
  long e;
  if (i < num.size() && num[i] != '0') {
    const std::size_t start = i;
    while (i < num.size() && num[i] >= '0' && num[i] <= '9') ++i;
    e = static_cast<long>(i - start) - 1;
  } else {
    ++i;  // JSON allows one leading zero only
    e = -1;
    if (i < num.size() && num[i] == '.') {
      ++i;
      while (i < num.size() && num[i] == '0') {
        --e;
        ++i;
      }
    }
  }
  while (i < num.size() && num[i] != 'e' && num[i] != 'E') ++i;
  if (i < num.size()) {
    ++i;
    bool negative = false;
    if (i < num.size() && (num[i] == '+' || num[i] == '-')) negative = num[i++] == '-';
    long x = 0;
    for (; i < num.size(); ++i) x = std::min(x * 10 + (num[i] - '0'), 100'000'000L);
    e += negative ? -x : x;
  }
  return e;
}

// The double a JSON number's text names, as parse_json reads it: an
// underflow is zero (its sign kept), as in ECMAScript; an overflow is
// kOutOfRange, text std::from_chars does not read whole kNotANumber.
enum class NumberText { kRead, kOutOfRange, kNotANumber };
NumberText read_number(std::string_view num, double& d) {
  d = 0;
  const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), d);
  if (ec == std::errc::result_out_of_range) {
    if (decimal_exponent(num) >= 0) return NumberText::kOutOfRange;
    d = num[0] == '-' ? -0.0 : 0.0;
    return NumberText::kRead;
  }
  return ec != std::errc() || end != num.data() + num.size() ? NumberText::kNotANumber : NumberText::kRead;
}

std::string out_of_range(std::string_view num) {
  return "expected a number that fits in a double, found " + excerpt(num) +
         " (number out of range of a double)";
}

// Builds Json values from RapidJSON's SAX events and adds the checks RapidJSON
// lacks. A check that fails records where and why, and returns false, which
// makes RapidJSON stop with kParseErrorTermination.
class Builder {
 public:
  using Ch = char;
  using SizeType = rapidjson::SizeType;

  Builder(const TextStream& in, std::string_view text) : in_(in), text_(text) {}

  bool Null() { return add(Json()); }
  bool Bool(bool b) { return add(Json(b)); }
  // With kParseNumbersAsStringsFlag every number arrives as RawNumber; these
  // complete the handler concept.
  bool Int(int i) { return add(Json(static_cast<double>(i))); }
  bool Uint(unsigned u) { return add(Json(static_cast<double>(u))); }
  bool Int64(std::int64_t i) { return add(Json(static_cast<double>(i))); }
  bool Uint64(std::uint64_t u) { return add(Json(static_cast<double>(u))); }
  bool Double(double d) { return add(Json(d)); }

  bool RawNumber(const Ch* s, SizeType n, bool) {
    const std::string_view num(s, n);
    const std::size_t start = in_.Tell() - n;
    double d = 0;
    switch (read_number(num, d)) {
      case NumberText::kOutOfRange: return fail(start, out_of_range(num));
      case NumberText::kNotANumber: return fail(start, "expected a number, found " + excerpt(num));
      case NumberText::kRead: break;
    }
    return add(Json(d));
  }

  bool String(const Ch* s, SizeType n, bool) {
    if (has_surrogate(s, n)) return fail_lone_low_surrogate(token_start(last_end_));
    return add(Json(std::string(s, n)));
  }

  bool Key(const Ch* s, SizeType n, bool) {
    key_offsets_.push_back(last_end_);
    if (has_surrogate(s, n)) return fail_lone_low_surrogate(token_start(last_end_));
    members_.emplace_back(std::string(s, n), Json());  // its value comes next (add)
    last_end_ = in_.Tell();
    return true;
  }

  bool StartObject() { return open(true, "an object"); }
  bool StartArray() { return open(false, "an array"); }

  bool EndArray(SizeType) {
    const Frame frame = frames_.back();
    frames_.pop_back();
    Json::Array elements;
    elements.reserve(values_.size() - frame.first);
    std::move(values_.begin() + static_cast<std::ptrdiff_t>(frame.first), values_.end(),
              std::back_inserter(elements));
    values_.resize(frame.first);
    return add(Json(std::move(elements)));
  }

  bool EndObject(SizeType) {
    const Frame frame = frames_.back();
    const Json::Member* first = members_.data() + frame.first;
    const std::size_t n = members_.size() - frame.first;
    if (const auto dup = find_duplicate(first, n)) {
      std::string name;
      write_json_string(first[*dup].first, name);
      return fail(token_start(key_offsets_[frame.first_key + *dup]),
                  "expected unique member names, found duplicate member name " + name);
    }
    key_offsets_.resize(frame.first_key);
    frames_.pop_back();
    Json::Object members;
    members.reserve(n);
    std::move(members_.begin() + static_cast<std::ptrdiff_t>(frame.first), members_.end(),
              std::back_inserter(members));
    members_.resize(frame.first);
    return add(Json(std::move(members)));
  }

  bool failed() const { return failed_; }
  std::size_t error_offset() const { return error_offset_; }
  const std::string& error() const { return error_; }
  Json take_root() { return std::move(root_); }

 private:
  // An open array's elements lie in values_ from `first` on, an open
  // object's members in members_: shared stacks, so that each array and
  // object is allocated once at its exact size when it closes, not regrown
  // element by element (a document is thousands of small containers).
  struct Frame {
    bool object;
    std::size_t first;      // its first element in values_, or member in members_
    std::size_t first_key;  // this object's first entry in key_offsets_
  };

  // Not inlined: inlined into RapidJSON's ParseValue, GCC 12 warns that the
  // moved Json's string may be uninitialized (a false -Wmaybe-uninitialized
  // through std::variant's move), and one call per value costs nothing.
  [[gnu::noinline]] bool add(Json v) {
    if (frames_.empty()) {
      root_ = std::move(v);
    } else if (!frames_.back().object) {
      values_.push_back(std::move(v));
    } else {
      members_.back().second = std::move(v);  // the member its Key opened
    }
    last_end_ = in_.Tell();
    return true;
  }

  bool open(bool object, const char* what) {
    if (frames_.size() >= kMaxDepth) {
      return fail(in_.Tell() - 1, "expected arrays and objects nested at most " +
                                      std::to_string(kMaxDepth) + " deep, found " + what +
                                      " at depth " + std::to_string(frames_.size() + 1));
    }
    frames_.push_back(Frame{object, object ? members_.size() : values_.size(), key_offsets_.size()});
    last_end_ = in_.Tell();
    return true;
  }

  // Index of the first member (in input order) whose name an earlier member has.
  static std::optional<std::size_t> find_duplicate(const Json::Member* members, std::size_t n) {
    constexpr std::size_t kPairwiseLimit = 16;  // below this, sorting costs more than it saves
    if (n <= kPairwiseLimit) {
      for (std::size_t j = 1; j < n; ++j) {
        for (std::size_t i = 0; i < j; ++i) {
          if (members[i].first == members[j].first) return j;
        }
      }
      return std::nullopt;
    }
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return members[a].first < members[b].first;
    });
    std::optional<std::size_t> first;
    for (std::size_t k = 1; k < n; ++k) {
      if (members[order[k]].first == members[order[k - 1]].first &&
          (!first || order[k] < *first)) {
        first = order[k];
      }
    }
    return first;
  }

  // The offset of the token that follows `from`: only blanks, ',' and ':' can
  // lie between the end of one token the handler saw and the start of the next.
  std::size_t token_start(std::size_t from) const {
    while (from < text_.size() &&
           (is_space(text_[from]) || text_[from] == ',' || text_[from] == ':')) {
      ++from;
    }
    return from;
  }

  // Points at the offending escape inside the string that starts at `quote`.
  bool fail_lone_low_surrogate(std::size_t quote) {
    std::size_t i = quote + 1;
    while (i < text_.size() && text_[i] != '"') {
      if (text_[i] != '\\') {
        ++i;
        continue;
      }
      if (i + 6 > text_.size() || text_[i + 1] != 'u') {
        i += 2;
        continue;
      }
      const unsigned unit = hex4(text_.substr(i + 2, 4));
      if (unit >= 0xDC00 && unit <= 0xDFFF) {
        const std::string escape(text_.substr(i, 6));
        return fail(i, "expected a high surrogate escape (\\ud800-\\udbff) before " + escape +
                           ", found lone surrogate " + escape);
      }
      i += unit >= 0xD800 && unit <= 0xDBFF ? 12 : 6;  // RapidJSON checked the pair
    }
    return fail(quote, "expected Unicode characters, found a lone surrogate");
  }

  bool fail(std::size_t offset, std::string what) {
    failed_ = true;
    error_offset_ = offset;
    error_ = std::move(what);
    return false;
  }

  const TextStream& in_;
  std::string_view text_;
  Json root_;
  std::vector<Frame> frames_;
  std::vector<Json> values_;
  std::vector<Json::Member> members_;
  // Per open object, per member: where the search for the name's opening quote
  // starts, so that a duplicate can be pointed at after the object is complete.
  std::vector<std::size_t> key_offsets_;
  std::size_t last_end_ = 0;  // where the last token the handler saw ends
  bool failed_ = false;
  std::size_t error_offset_ = 0;
  std::string error_;
};

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '+' || c == '-' || c == '.';
}

struct SyntaxError {
  std::size_t offset;
  std::string what;
};

// Plain English for RapidJSON's error codes; the "found" part is read from the
// input rather than taken from RapidJSON.
SyntaxError explain(rapidjson::ParseErrorCode code, std::string_view text, std::size_t offset) {
  using namespace rapidjson;
  const auto found = [&](std::size_t at) { return describe(text, at); };
  switch (code) {
    case kParseErrorDocumentEmpty:
      return {offset, "expected a JSON value, found " + found(offset)};
    case kParseErrorDocumentRootNotSingular:
      return {offset, "expected end of input after the JSON value, found " + found(offset)};
    case kParseErrorValueInvalid: {
      // RapidJSON stops inside a misspelt literal ("tru]"): point at its start.
      std::size_t start = std::min(offset, text.size());
      while (start > 0 && is_word_char(text[start - 1])) --start;
      std::size_t end = start;
      while (end < text.size() && is_word_char(text[end])) ++end;
      const std::string what = end > start ? "'" + excerpt(text.substr(start, end - start)) + "'"
                                           : found(start);
      return {start,
              "expected a JSON value (object, array, string, number, true, false or null), found " +
                  what};
    }
    case kParseErrorObjectMissName:
      return {offset, "expected a member name in double quotes, found " + found(offset)};
    case kParseErrorObjectMissColon:
      return {offset, "expected ':' after a member name, found " + found(offset)};
    case kParseErrorObjectMissCommaOrCurlyBracket:
      return {offset, "expected ',' or '}' after an object member, found " + found(offset)};
    case kParseErrorArrayMissCommaOrSquareBracket:
      return {offset, "expected ',' or ']' after an array element, found " + found(offset)};
    case kParseErrorStringUnicodeEscapeInvalidHex: {
      // RapidJSON points at the backslash (of the high surrogate, when the bad
      // digit is in the low one that follows); point at the digit that is not one.
      const auto first_non_hex = [&](std::size_t escape) {
        std::size_t at = escape + 2;
        while (at < text.size() && at < escape + 6 && is_hex(text[at])) ++at;
        return at;
      };
      std::size_t at = first_non_hex(offset);
      if (at == offset + 6 && text.substr(at, 2) == "\\u") at = first_non_hex(at);
      return {at, "expected four hex digits after \\u, found " + found(at)};
    }
    case kParseErrorStringUnicodeSurrogateInvalid: {
      const std::string escape(text.substr(offset, 6));
      const std::size_t next = offset + 6;
      const std::string after = text.substr(next, 2) == "\\u" && next + 6 <= text.size()
                                    ? "'" + std::string(text.substr(next, 6)) + "'"
                                    : found(next);
      return {offset, "expected a low surrogate escape (\\udc00-\\udfff) after " + escape +
                          ", found lone surrogate " + escape + " followed by " + after};
    }
    case kParseErrorStringEscapeInvalid:
      if (offset < text.size() && text[offset] == '\\') {
        return {offset, "expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX), found '\\' "
                        "followed by " + found(offset + 1)};
      }
      return {offset, "expected a character allowed in a string (control characters must be "
                      "escaped), found " + found(offset)};
    case kParseErrorStringMissQuotationMark:
      if (offset < text.size()) {  // RapidJSON took an embedded NUL for the end
        return {offset, "expected a character allowed in a string (control characters must be "
                        "escaped), found " + found(offset)};
      }
      return {offset, "expected '\"' to close the string, found " + found(offset)};
    case kParseErrorStringInvalidEncoding:
      return {offset, "expected UTF-8 text, found " + found(offset)};
    case kParseErrorNumberTooBig: {
      std::size_t end = offset;
      while (end < text.size() && is_word_char(text[end])) ++end;
      return {offset, out_of_range(text.substr(offset, end - offset))};
    }
    case kParseErrorNumberMissFraction:
      return {offset, "expected a digit after the decimal point, found " + found(offset)};
    case kParseErrorNumberMissExponent:
      return {offset, "expected a digit in the exponent, found " + found(offset)};
    default:
      return {offset, std::string("expected JSON, found ") + found(offset)};
  }
}

}  // namespace

namespace {

// Whether all of `text` is UTF-8 as RFC 3629 has it (check_utf8).
bool valid_utf8(std::string_view text) { return first_invalid_utf8(text) == std::string_view::npos; }

// parse_json without its size bound: the callers below bound it.
Json parse_bounded(std::string_view text, std::string_view source, std::size_t first_line) {
  const Locator where(text, source, first_line);
  // Numbers come as text and are converted by std::from_chars: RapidJSON
  // 1.1.0's own conversion, even with kParseFullPrecisionFlag, gets the edges
  // wrong ("10e308" gives -3.09e-308, "1.8e308" NaN, 2.4703282292062327e-324
  // the smallest subnormal instead of 0). Nesting is bounded by the handler
  // (kMaxDepth), which bounds the recursive parser's stack too.
  // RapidJSON's check of UTF-8 goes character by character through every
  // string; a text that is valid UTF-8 throughout (checked here, eight ASCII
  // bytes at a time) needs none, and one that is not is parsed with it, so
  // that the message names the first bad sequence where the parse meets it.
  constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag;
  constexpr unsigned kCheckedFlags = kFlags | rapidjson::kParseValidateEncodingFlag;
  TextStream in(text);
  Builder builder(in, text);
  rapidjson::Reader reader;
  const rapidjson::ParseResult result =
      valid_utf8(text) ? reader.Parse<kFlags>(in, builder) : reader.Parse<kCheckedFlags>(in, builder);
  if (builder.failed()) throw InvalidInput(where.at(builder.error_offset()) + builder.error());
  if (result.IsError()) {
    const SyntaxError e = explain(result.Code(), text, result.Offset());
    throw InvalidInput(where.at(e.offset) + e.what);
  }
  if (in.Tell() != text.size()) {  // stopped at an embedded NUL
    throw InvalidInput(where.at(in.Tell()) + "expected end of input after the JSON value, found " +
                       describe(text, in.Tell()));
  }
  return builder.take_root();
}

// RapidJSON's events for a text, compared as they come with the RFC 8785
// bytes of what they describe, at the place in the text where they must
// stand: any difference (a blank, an escape JCS would not write, a member out
// of order or repeated, a number in another form) stops the parse. Beside
// that, the checks Builder adds to RapidJSON's: nesting depth, numbers in
// range, no lone low surrogate.
class CanonicalEcho {
 public:
  using Ch = char;
  using SizeType = rapidjson::SizeType;

  explicit CanonicalEcho(std::string_view text) : text_(text) {}

  bool Null() { return value() && expect("null"); }
  bool Bool(bool b) { return value() && expect(b ? "true" : "false"); }
  // With kParseNumbersAsStringsFlag every number arrives as RawNumber.
  bool Int(int) { return false; }
  bool Uint(unsigned) { return false; }
  bool Int64(std::int64_t) { return false; }
  bool Uint64(std::uint64_t) { return false; }
  bool Double(double) { return false; }

  bool RawNumber(const Ch* s, SizeType n, bool) {
    double d = 0;
    if (read_number(std::string_view(s, n), d) != NumberText::kRead) return false;
    scratch_ = format_number(d);
    return value() && expect(scratch_);
  }

  bool String(const Ch* s, SizeType n, bool) {
    if (has_surrogate(s, n)) return false;
    return value() && expect_string(std::string_view(s, n));
  }

  bool Key(const Ch* s, SizeType n, bool) {
    if (has_surrogate(s, n)) return false;
    Frame& top = frames_.back();
    const std::string_view name(s, n);
    if (top.count > 0 && !canonical_name_less(std::string_view(names_).substr(top.last_name), name)) return false;
    if (top.count > 0 && !expect(",")) return false;
    ++top.count;
    names_.resize(top.last_name);
    names_.append(name);
    return expect_string(name) && expect(":");
  }

  bool StartObject() { return open('{'); }
  bool StartArray() { return open('['); }
  bool EndObject(SizeType) { return close('}'); }
  bool EndArray(SizeType) { return close(']'); }

  // Whether the whole text was read, as canonical.
  bool done() const { return frames_.empty() && at_ == text_.size(); }

 private:
  struct Frame {
    bool object;
    std::size_t count = 0;      // members or elements so far
    std::size_t last_name = 0;  // an object's: where its last member's name starts in names_
  };

  // Before a value: in an array, its comma (a member's comes with its name).
  bool value() {
    if (frames_.empty() || frames_.back().object) return true;
    return frames_.back().count++ == 0 || expect(",");
  }

  bool open(char bracket) {
    if (frames_.size() >= kMaxDepth || !value() || !expect(std::string_view(&bracket, 1))) return false;
    frames_.push_back(Frame{bracket == '{', 0, names_.size()});
    return true;
  }

  bool close(char bracket) {
    names_.resize(frames_.back().last_name);
    frames_.pop_back();
    return expect(std::string_view(&bracket, 1));
  }

  bool expect(std::string_view bytes) {
    if (text_.compare(at_, bytes.size(), bytes) != 0) return false;
    at_ += bytes.size();
    return true;
  }

  // A string literal as JCS writes `s`. When the text holds `s` itself
  // between quotes, with no backslash, that string had no escape (a raw '"'
  // or control character cannot stand in one), and JCS writes none for such
  // a string: only strings with escapes are written out to compare.
  bool expect_string(std::string_view s) {
    if (at_ + s.size() + 2 <= text_.size() && text_[at_] == '"' && text_.compare(at_ + 1, s.size(), s) == 0 &&
        text_[at_ + 1 + s.size()] == '"' && s.find('\\') == std::string_view::npos) {
      at_ += s.size() + 2;
      return true;
    }
    scratch_.clear();
    write_json_string(s, scratch_);
    return expect(scratch_);
  }

  std::string_view text_;
  std::size_t at_ = 0;  // how much of the text the events matched
  std::vector<Frame> frames_;
  std::string names_;  // the last member name of each open object, innermost last
  std::string scratch_;
};

}  // namespace

std::size_t first_invalid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    if (i + 8 <= text.size()) {
      std::uint64_t word;
      std::memcpy(&word, text.data() + i, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    const Utf8Sequence seq = check_utf8(text, i);
    if (!seq.valid) return i;
    i += seq.length;
  }
  return std::string_view::npos;
}

std::string describe_utf8_fault(std::string_view text, std::size_t offset) { return describe(text, offset); }

std::size_t utf8_char(std::string_view text, std::size_t i, std::uint32_t& cp) {
  const Utf8Sequence seq = check_utf8(text, i);
  if (!seq.valid) return 0;
  cp = static_cast<unsigned char>(text[i]) & (seq.length == 1 ? 0x7F : 0x7F >> seq.length);
  for (std::size_t k = 1; k < seq.length; ++k) cp = cp << 6 | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  return seq.length;
}

bool is_canonical_json(std::string_view text) {
  if (text.size() > kMaxInputBytes || !valid_utf8(text)) return false;
  TextStream in(text);
  CanonicalEcho echo(text);
  rapidjson::Reader reader;
  const rapidjson::ParseResult result = reader.Parse<rapidjson::kParseNumbersAsStringsFlag>(in, echo);
  return !result.IsError() && in.Tell() == text.size() && echo.done();
}

Json parse_json(std::string_view text, std::string_view source, std::size_t first_line) {
  if (text.size() > kMaxInputBytes) {
    throw InvalidInput(Locator(text, source, first_line).at(0) + "expected at most " + std::to_string(kMaxInputBytes) +
                       " bytes (16 MiB) of JSON text, found " + std::to_string(text.size()) + " bytes");
  }
  return parse_bounded(text, source, first_line);
}

Json parse_json_up_to(std::string_view text, std::string_view source, std::size_t max_bytes) {
  if (text.size() > max_bytes) {
    throw InvalidInput(Locator(text, source, 1).at(0) + "expected at most " + std::to_string(max_bytes) +
                       " bytes of JSON text, found " + std::to_string(text.size()) + " bytes");
  }
  return parse_bounded(text, source, 1);
}

}  // namespace kistore
