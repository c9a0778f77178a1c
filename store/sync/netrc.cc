#include "store/sync/netrc.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace kistore {
namespace {

class Tokens {
 public:
  explicit Tokens(std::string_view text) : text_(text) {}

  // The next token; nullopt at the end.
  std::optional<std::string> next() {
    skip_space();
    if (at_ >= text_.size()) return std::nullopt;
    std::string out;
    if (text_[at_] == '"') {
      for (++at_; at_ < text_.size() && text_[at_] != '"'; ++at_) {
        char c = text_[at_];
        if (c == '\\' && at_ + 1 < text_.size()) {
          c = text_[++at_];
          c = c == 'n' ? '\n' : c == 'r' ? '\r' : c == 't' ? '\t' : c;
        }
        out += c;
      }
      if (at_ < text_.size()) ++at_;  // the closing quote
      return out;
    }
    while (at_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[at_]))) out += text_[at_++];
    return out;
  }

  // Skips a macro's body: everything up to the next blank line.
  void skip_macro() {
    const std::size_t end = text_.find("\n\n", at_);
    at_ = end == std::string_view::npos ? text_.size() : end + 2;
  }

 private:
  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  std::string_view text_;
  std::size_t at_ = 0;
};

bool same_host(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::vector<NetrcEntry> parse_netrc(std::string_view text) {
  std::vector<NetrcEntry> out;
  Tokens tokens(text);
  NetrcEntry* entry = nullptr;
  while (std::optional<std::string> t = tokens.next()) {
    if (*t == "machine" || *t == "default") {
      out.push_back({});
      entry = &out.back();
      if (*t == "machine") {
        std::optional<std::string> host = tokens.next();
        if (!host) break;
        entry->machine = *host;
      }
    } else if (*t == "macdef") {
      tokens.next();  // its name
      tokens.skip_macro();
      entry = nullptr;
    } else if (*t == "login" || *t == "password" || *t == "account") {
      std::optional<std::string> value = tokens.next();
      if (!value) break;
      if (!entry) continue;
      if (*t == "login") entry->login = *value;
      if (*t == "password") entry->password = *value;
    }
  }
  return out;
}

const NetrcEntry* find_netrc(const std::vector<NetrcEntry>& entries, std::string_view host, std::string_view user) {
  for (const NetrcEntry& e : entries)
    if (!e.machine.empty() && same_host(e.machine, host) && !e.password.empty() && (user.empty() || e.login == user))
      return &e;
  return nullptr;
}

}  // namespace kistore
