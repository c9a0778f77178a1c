// A workload's parameters as one short line, and the order in which such
// lines are listed: what tells comparison groups apart at a glance (groups,
// rank's header).
//
// Pure functions of their arguments: safe from any thread; they never fail
// (allocation aside).
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "objects/json.h"

namespace kistore::cli {

// A workload's parameters in short, for telling groups apart at a glance:
// "T=1024 bsz=2 hidden=2048 inter=4096 num_shards=4 bf16". Numbers as
// name=value, sorted by name, long common names shortened (seq_len: seq,
// batch_size: bsz, hidden_size: hidden, intermediate_size: inter,
// vocab_size: vocab, num_heads: heads); then the strings and booleans named
// in `varying` as name=value (those whose values tell the listed groups of a
// benchmark apart: the others are constants of the benchmark, such as
// hidden_act=silu), and any other member holding a torch type, as
// name=short form; the dtype last, as its short form alone (bf16, fp16, fp32,
// or the name without "torch."). Arrays and objects are left out (the full
// parameters are in --json). "" for null or an object without such members.
std::string parameters_text(const Json& parameters, const std::set<std::string>& varying = {});

// Whether `a` sorts before `b` with runs of digits compared as numbers
// ("seq=1024" before "seq=16384", "x9" before "x10").
bool natural_less(std::string_view a, std::string_view b);

}  // namespace kistore::cli
