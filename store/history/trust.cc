#include "store/history/trust.h"

#include "objects/error.h"
#include "store/edge/tempfiles.h"

#include <fcntl.h>
#include <unistd.h>

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
  std::string path = trust_file(store);
  std::filesystem::create_directories(store.local_dir());
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw IOError(tmp + ": cannot create");
  try {
    write_all(fd, text, tmp);
  } catch (const Error&) {
    ::close(fd);
    std::remove(tmp.c_str());
    throw;
  }
  bool ok = ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw IOError(path + ": cannot write the trust list");
  }
  sync_folder(store.local_dir());
}

void save_trust(const Store& store, const std::vector<AllowedSigner>& signers) {
  save_trust_text(store, render_allowed_signers(signers));
}

}  // namespace kistore
