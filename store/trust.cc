#include "store/trust.h"

#include "objects/error.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kistore {

std::string trust_file(const Store& store) { return store.local_dir() + "/allowed_signers"; }

std::vector<AllowedSigner> load_allowed_signers(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(path + ": cannot open the allowed-signers file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_allowed_signers(ss.str(), path);
}

std::vector<AllowedSigner> load_trust(const Store& store) {
  std::string path = trust_file(store);
  if (!std::filesystem::exists(path)) return {};
  return load_allowed_signers(path);
}

void save_trust(const Store& store, const std::vector<AllowedSigner>& signers) {
  std::string path = trust_file(store);
  std::filesystem::create_directories(store.local_dir());
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  std::string text = render_allowed_signers(signers);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw IOError(tmp + ": cannot create");
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw IOError(path + ": cannot write the trust list");
  }
}

}  // namespace kistore
