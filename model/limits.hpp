// Bounds on what input may ask for, checked before anything is allocated (docs/input-limits.md): how long a sequence
// may be, how large a JSON file may be, and which strings may become file names.
#pragma once
#include <cstdint>
#include <string>

#include "model/config.hpp"

namespace salasim {

// JSON inputs (configs, scenarios, checkpoint indexes, hardware profiles, measured runs) are read up to this size:
// the largest real one is a few kB; a bigger file is refused with its size, not read whole.
constexpr int64_t kJsonMaxBytes = int64_t(64) << 20;
// Arrays and objects nest at most this deep (ours nest 3 deep), so no later walk over a value can run out of stack.
constexpr int kJsonMaxDepth = 64;

// Ranges of the integers of a config.json, from what each field means: far past any real model (the released one
// has 32 layers, 32 heads of 128, hidden 4096, vocabulary 73,448, 524,288 positions), and small enough that every
// size derived from them (q_dim, tensor element counts, bytes per token) stays within its type. A value outside is
// an error naming the field, never a number truncated to 32 bits.
constexpr int64_t kMaxLayers = 4096;               // num_hidden_layers
constexpr int64_t kMaxHeads = 4096;                // attention heads of either mixer
constexpr int64_t kMaxHeadDim = 4096;              // head_dim, lightning_head_dim
constexpr int64_t kMaxWidth = int64_t(1) << 20;    // hidden_size, intermediate_size, dim_model_base
constexpr int64_t kMaxVocab = INT32_MAX;           // token ids are 32-bit
// max_position_embeddings: the model's RoPE angles are an fp32 table, exact only below 2^24 positions (32x the
// released length); with extrapolation a sequence stays below 2^26 tokens, so its token buffer is at most 256 MB.
constexpr int64_t kMaxPositions = int64_t(1) << 24;
constexpr int64_t kMaxBlock = int64_t(1) << 16;    // sparse kernel_size, kernel_stride, block_size
// Token counts given on the command line or in report options (context lengths, prefill chunks, decode tokens).
constexpr int64_t kMaxContext = int64_t(1) << 32;  // analytic models only: runs are bounded by max_positions()
constexpr int64_t kMaxChunk = int64_t(1) << 24;
// The analytic latency model sums every decode step and every prefill chunk one by one: at most this many of each.
constexpr int64_t kMaxDecodeTokens = int64_t(1) << 20;
constexpr int64_t kMaxPrefillCalls = int64_t(1) << 20;

// MiniCPM-SALA was trained to max_position_embeddings (524,288) and is evaluated up to 4x that (2048K) with no
// position scaling. A run stays within max_position_embeddings unless it opts in to extrapolation, which allows up
// to this multiple of it.
constexpr int64_t kExtrapolationFactor = 4;

// The longest sequence (prompt + decode steps) a run of `c` may have.
int64_t max_positions(const ModelConfig& c, bool extrapolate);

// Throws naming `where` (a scenario file, "--tokens") when prompt + decode steps pass max_positions, or when either
// is negative, or the prompt is empty.
void check_positions(const ModelConfig& c, int64_t prompt, int64_t decode, bool extrapolate, const std::string& where);

// `value` unchanged when it is a plain file name: not empty, not "." or "..", no '/', no '\\', no control
// characters, at most 255 bytes. Otherwise throws "<where>: field '<field>' is '<value>'; expected a plain file
// name ...": names from input files never choose a folder (scenario names, checkpoint shard names).
const std::string& plain_file_name(const std::string& value, const std::string& where, const std::string& field);

}  // namespace salasim
