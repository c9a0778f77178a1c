#include "store/history/trust.h"

#include "objects/error.h"
#include "store/edge/files.h"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kistore {

std::string trust_file(const Store& store) { return store.local_dir() + "/allowed_signers"; }

SigningTime signing_time(std::int64_t seconds) {
  SigningTime t;
  t.seconds = seconds;
  t.local_to_utc = [](std::int64_t civil) -> std::int64_t {
    // The civil fields back out of "seconds as if UTC", then mktime reads
    // them in the local zone, as ssh-keygen's parse_absolute_time does.
    std::time_t as_utc = static_cast<std::time_t>(civil);
    std::tm fields{};
    if (!gmtime_r(&as_utc, &fields)) return civil;
    fields.tm_isdst = -1;
    std::time_t local = std::mktime(&fields);
    return local == static_cast<std::time_t>(-1) ? civil : static_cast<std::int64_t>(local);
  };
  return t;
}

std::vector<AllowedSigner> load_allowed_signers(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(path + ": cannot open the allowed-signers file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_allowed_signers(ss.str(), path);
}

std::string load_trust_text(const Store& store) {
  std::string path = trust_file(store);
  if (!std::filesystem::exists(path)) return {};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(path + ": cannot open the allowed-signers file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<AllowedSigner> load_trust(const Store& store) {
  std::string path = trust_file(store);
  if (!std::filesystem::exists(path)) return {};
  return load_allowed_signers(path);
}

void save_trust_text(const Store& store, const std::string& text) {
  store.check_settings_writable();
  const std::string dir = store.local_dir();
  // Made beside the store's other files, whose folder exists: only the
  // local folder itself may be missing.
  const bool made = make_folder(dir);
  try {
    replace_file(trust_file(store), text, "trust");
  } catch (...) {
    if (made) remove_empty_folder_quietly(dir);
    throw;
  }
}

void save_trust(const Store& store, const std::vector<AllowedSigner>& signers) {
  save_trust_text(store, render_allowed_signers(signers));
}

}  // namespace kistore
