// JSON values, strict parsing, and RFC 8785 canonical form (JCS).
//
// kistore names every document by the SHA-256 of its JCS bytes, so this file
// is the root of every digest in the store. Parsing is strict: it rejects
// everything JCS cannot represent faithfully (invalid UTF-8, lone surrogates,
// duplicate member names, numbers beyond a double, nesting deeper than
// kMaxDepth, inputs over kMaxInputBytes), with an Error(kInvalidInput) whose
// message is "<source>:<line>:<column>: <what was expected>, found <what>".
// Every number is held as an IEEE-754 double (JCS is I-JSON).
//
// Thread-safety: values are plain data; all functions are reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace kistore {

inline constexpr std::size_t kMaxDepth = 64;
inline constexpr std::size_t kMaxInputBytes = 16u << 20;  // 16 MiB

class Json {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  using Array = std::vector<Json>;
  using Member = std::pair<std::string, Json>;
  using Object = std::vector<Member>;  // input order kept; names are unique

  Json() : v_(nullptr) {}
  Json(std::nullptr_t) : v_(nullptr) {}
  Json(bool b) : v_(b) {}
  Json(double d) : v_(d) {}
  Json(int i) : v_(static_cast<double>(i)) {}
  Json(long i) : v_(static_cast<double>(i)) {}
  Json(long long i) : v_(static_cast<double>(i)) {}
  Json(std::string s) : v_(std::move(s)) {}
  Json(std::string_view s) : v_(std::string(s)) {}
  Json(const char* s) : v_(std::string(s)) {}
  Json(Array a) : v_(std::move(a)) {}
  Json(Object o) : v_(std::move(o)) {}

  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }

  Type type() const { return static_cast<Type>(v_.index()); }
  bool is_null() const { return type() == Type::kNull; }
  bool is_bool() const { return type() == Type::kBool; }
  bool is_number() const { return type() == Type::kNumber; }
  bool is_string() const { return type() == Type::kString; }
  bool is_array() const { return type() == Type::kArray; }
  bool is_object() const { return type() == Type::kObject; }

  // Accessors: the caller must have checked the type (std::bad_variant_access otherwise).
  bool as_bool() const { return std::get<bool>(v_); }
  double as_number() const { return std::get<double>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const Array& as_array() const { return std::get<Array>(v_); }
  Array& as_array() { return std::get<Array>(v_); }
  const Object& as_object() const { return std::get<Object>(v_); }
  Object& as_object() { return std::get<Object>(v_); }

  // Object member lookup; nullptr when absent or when this is not an object.
  const Json* find(std::string_view name) const;
  Json* find(std::string_view name);
  // Sets (replacing) or appends a member; this must be an object.
  Json& set(std::string_view name, Json value);
  // Removes a member if present; returns whether it was there.
  bool erase(std::string_view name);
  // Appends to an array.
  void push_back(Json value) { as_array().push_back(std::move(value)); }

  // Structural equality (numbers compared as doubles, objects as sets of members).
  friend bool operator==(const Json& a, const Json& b);

 private:
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> v_;
};

// Parses one JSON text. `source` names the input in messages (a file name, or
// "<stdin>"); `first_line` is the line number of text[0] in that source (for
// JSON Lines). Throws Error(kInvalidInput) naming source:line:column.
Json parse_json(std::string_view text, std::string_view source, std::size_t first_line = 1);

// The offset of the first byte of `text` that does not begin a UTF-8
// sequence as RFC 3629 has it (no overlong forms, no surrogates, nothing past
// U+10FFFF; parse_json's own rule), or std::string_view::npos when there is
// none. describe_utf8_fault names what stands at that offset for a message
// ("invalid UTF-8 byte 0xC0", "truncated UTF-8 sequence 0xE2 0x82").
// Strings built from anything but parse_json (CSV cells, a program's output)
// are checked with it before they reach a document.
std::size_t first_invalid_utf8(std::string_view text);
std::string describe_utf8_fault(std::string_view text, std::size_t offset);
// The length of the UTF-8 sequence at text[i] (by that same rule) and its
// code point in `cp`, or 0 when the bytes there are not one.
std::size_t utf8_char(std::string_view text, std::size_t i, std::uint32_t& cp);

// Appends the RFC 8785 canonical form of `value` to `out`. Throws
// std::logic_error for a NaN or infinite number, which no parsed value holds
// (a programming error, not bad input).
void write_canonical(const Json& value, std::string& out);
std::string canonical(const Json& value);

// ECMAScript Number::toString of a finite double (RFC 8785 §3.2.2.3): "-0" is
// "0". Throws std::logic_error for NaN or an infinity.
std::string format_number(double value);

// Whether member name `a` sorts before `b` in RFC 8785 order (UTF-16 code
// units; both valid UTF-8).
bool canonical_name_less(std::string_view a, std::string_view b);

// Whether `text` is, byte for byte, the RFC 8785 form of a value parse_json
// accepts: true exactly when parse_json(text) would return a value whose
// canonical() is `text`. Builds no value and allocates little: for reading
// many texts that were written canonical (index lines, stored metadata).
// false says nothing of why; parse_json and canonical name the fault.
bool is_canonical_json(std::string_view text);

// Human-readable form: members in canonical order, two-space indentation,
// strings as in JCS. Ends without a newline.
std::string pretty(const Json& value);

// Appends `s` as a JSON string literal (JCS escaping) to `out`.
void write_json_string(std::string_view s, std::string& out);

// `s` as a message shows a value it found: a JSON string literal (so control
// characters are escaped), cut after at most `max` bytes, at a UTF-8
// character boundary, with "..." before the closing quote when cut.
std::string quoted_excerpt(std::string_view s, std::size_t max = 80);

// RFC 6901 JSON Pointer token escaping ("~" -> "~0", "/" -> "~1").
std::string pointer_token(std::string_view name);
// The pointer of a member or element of the value at `parent`: parent + "/" +
// the escaped token, made in one allocation (importers make one per value
// they read).
std::string pointer_child(std::string_view parent, std::string_view member);
std::string pointer_child(std::string_view parent, std::size_t index);

}  // namespace kistore
