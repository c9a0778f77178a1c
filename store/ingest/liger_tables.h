// What Liger-Kernel's names mean: its GPUs, kernels, workload dimensions and
// timed passes, as tables that store/ingest/import_liger.cc maps rows with.
//
// Internal to the Liger importer. Thread-safety: constant data.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace kistore::liger {

struct Gpu {
  std::string_view name;  // exactly as torch.cuda.get_device_name reports it
  std::string_view vendor;
  std::string_view architecture;
};

// Every gpu_name of the published tables, plus common datacenter and
// workstation parts, so that a newer table does not fail on a well-known GPU.
// Architecture: the CUDA compute capability as nvcc names it (sm_XY), or the
// LLVM AMDGPU target for AMD (gfxNNN).
inline constexpr Gpu kGpus[] = {
    {"NVIDIA A100-SXM4-80GB", "nvidia", "sm_80"},
    {"NVIDIA A100-SXM4-40GB", "nvidia", "sm_80"},
    {"NVIDIA A100-PCIE-40GB", "nvidia", "sm_80"},
    {"NVIDIA A100 80GB PCIe", "nvidia", "sm_80"},
    {"NVIDIA A10G", "nvidia", "sm_86"},
    {"NVIDIA GeForce RTX 3090", "nvidia", "sm_86"},
    {"NVIDIA GeForce RTX 4090", "nvidia", "sm_89"},
    {"NVIDIA L4", "nvidia", "sm_89"},
    {"NVIDIA L40S", "nvidia", "sm_89"},
    {"NVIDIA H100 PCIe", "nvidia", "sm_90"},
    {"NVIDIA H100 80GB HBM3", "nvidia", "sm_90"},
    {"NVIDIA H200", "nvidia", "sm_90"},
    {"NVIDIA B200", "nvidia", "sm_100"},
    {"NVIDIA GeForce RTX 5090", "nvidia", "sm_120"},
    {"AMD Instinct MI300X", "amd", "gfx942"},
};

// What each benchmarked kernel computes (Workload spec.definition). A kernel
// not listed here is defined by its own name.
inline constexpr std::pair<std::string_view, std::string_view> kDefinitions[] = {
    {"cross_entropy", "Cross-entropy loss"},
    {"distill_cosine_loss", "Fused linear + cosine-similarity distillation loss"},
    {"distill_jsd_loss", "Fused linear + Jensen-Shannon distillation loss"},
    {"dyt", "Dynamic Tanh (DyT) normalization"},
    {"embedding", "Embedding lookup"},
    {"fused_add_rms_norm", "Residual add + RMSNorm"},
    {"fused_linear_cpo_loss", "Fused linear + CPO preference loss"},
    {"fused_linear_cross_entropy", "Fused linear + cross-entropy loss"},
    {"fused_linear_grpo_loss_sequence",
     "Fused linear + GRPO loss (sequence-level importance sampling)"},
    {"fused_linear_grpo_loss_token", "Fused linear + GRPO loss (token-level importance sampling)"},
    {"fused_linear_jsd", "Fused linear + Jensen-Shannon divergence"},
    {"fused_linear_orpo_loss", "Fused linear + ORPO preference loss"},
    {"fused_linear_simpo_loss", "Fused linear + SimPO preference loss"},
    {"fused_moe", "Mixture-of-experts MLP (fused MoE)"},
    {"fused_neighborhood_attention", "Neighborhood attention"},
    {"geglu", "GeGLU MLP"},
    {"group_norm", "GroupNorm"},
    {"jsd", "Jensen-Shannon divergence"},
    {"kl_div", "KL divergence loss"},
    {"kto_loss", "Fused linear + KTO preference loss"},
    {"layer_norm", "LayerNorm"},
    {"llama4_rope", "Llama 4 rotary position embedding"},
    {"megatron_cross_entropy", "Cross-entropy loss (Megatron-LM benchmark)"},
    {"megatron_rms_norm", "RMSNorm (Megatron-LM benchmark)"},
    {"megatron_swiglu", "SwiGLU activation (Megatron-LM benchmark)"},
    {"multi_token_attention", "Multi-token attention (convolution over attention scores)"},
    {"poly_norm", "PolyNorm"},
    {"qwen2vl_mrope", "Qwen2-VL multimodal rotary position embedding (M-RoPE)"},
    {"relu_squared", "Squared ReLU"},
    {"rms_norm", "RMSNorm"},
    {"rope", "Rotary position embedding (RoPE)"},
    {"softmax", "Softmax"},
    {"sparse_multi_token_attention", "Multi-token attention with sparsemax"},
    {"sparsemax", "Sparsemax"},
    {"swiglu", "SwiGLU MLP"},
    {"tiled_geglu", "GeGLU MLP (tiled benchmark)"},
    {"tiled_swiglu", "SwiGLU MLP (tiled benchmark)"},
    {"tvd", "Total variation distance"},
};

// Short names of the workload dimensions in slugs. Keys not listed are named
// by their own slug ("kernel_size" -> "kernel-size", "M" -> "m").
inline constexpr std::pair<std::string_view, std::string_view> kSlugNames[] = {
    {"B", "batch"},
    {"BT", "tokens"},
    {"E", "experts"},
    {"H", "hidden"},
    {"S", "seq"},
    {"T", "seq"},
    {"V", "vocab"},
    {"batch_size", "batch"},
    {"bsz", "batch"},
    {"hidden_size", "hidden"},
    {"intermediate_dim", "intermediate"},
    {"intermediate_size", "intermediate"},
    {"model_config", "model"},
    {"num_attention_heads", "qheads"},
    {"num_heads", "heads"},
    {"num_key_value_heads", "kvheads"},
    {"num_kv_heads", "kvheads"},
    {"num_q_heads", "qheads"},
    {"seq_len", "seq"},
    {"vocab_size", "vocab"},
};

// Integer config members that are knobs or constants, not sizes: they stay in
// the workload's parameters but do not name it. (num_shards is how the tiled
// MLP benchmark splits its work; KernelIndex's published slug leaves it out.)
inline constexpr std::string_view kSlugSkipped[] = {"dim", "eps", "ignore_index", "num_shards"};

template <std::size_t N>
std::optional<std::string_view> lookup(const std::pair<std::string_view, std::string_view> (&table)[N],
                                       std::string_view key) {
  for (const auto& [k, v] : table)
    if (k == key) return v;
  return std::nullopt;
}

struct PassInfo {
  std::string_view mode;      // the CSV's kernel_operation_mode
  std::string_view timed;     // what do_bench timed ("Timed: <timed>, via ...")
  std::string_view title;     // "<title> pass" in protocol titles
};

inline constexpr PassInfo kPasses[] = {
    {"forward", "the forward pass of the module", "forward"},
    {"backward", "the backward pass of the module output given a random upstream gradient",
     "backward"},
    {"full",
     "the forward pass followed by the backward pass of its output given a random upstream "
     "gradient",
     "full (forward + backward)"},
    {"no-grad-forward",
     "the forward pass of the module under torch.no_grad() (no autograd graph recorded)",
     "no-grad forward"},
};

}  // namespace kistore::liger
