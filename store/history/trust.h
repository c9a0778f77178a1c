// The store's controllers: an allowed-signers file (git's
// gpg.ssh.allowedSignersFile format) kept in the repository's own folder,
// local to this store and never synced (SPEC §1).
#pragma once

#include <string>
#include <vector>

#include "objects/ssh_signature.h"
#include "store/core/store.h"

namespace kistore {

// "<git dir>/kistore/allowed_signers".
std::string trust_file(const Store& store);
// The controllers; empty when the file does not exist.
std::vector<AllowedSigner> load_trust(const Store& store);
// Replaces the file atomically (temporary file, fsync, rename).
void save_trust(const Store& store, const std::vector<AllowedSigner>& signers);
// A signing time for find_signer/lookup_signer (objects/ssh_signature.h)
// whose validity times without 'Z' are read in this machine's time zone (TZ),
// as ssh-keygen reads them.
SigningTime signing_time(std::int64_t seconds);
// The file's text; empty when it does not exist. Throws IOError when it
// cannot be read.
std::string load_trust_text(const Store& store);
// Replaces the file with `text` atomically (temporary file, fsync, rename,
// through the file gate: store/edge/files.h, replace_file). Error(kIO)
// naming the file or the temporary file; the old list is then untouched
// (unless only the final sync of the folder failed).
void save_trust_text(const Store& store, const std::string& text);
// Reads an allowed-signers file given by the user.
std::vector<AllowedSigner> load_allowed_signers(const std::string& path);

}  // namespace kistore
