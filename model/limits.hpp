// Bounds on what input may ask for, checked before anything is allocated (docs/input-limits.md): how long a sequence
// may be, how large a JSON file may be, and which strings may become file names.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/config.hpp"

namespace salasim {

// JSON inputs (configs, scenarios, checkpoint indexes, hardware profiles, measured runs) are read up to this size:
// the largest real one is a few kB; a bigger file is refused with its size, not read whole.
constexpr int64_t kJsonMaxBytes = int64_t(64) << 20;
// A plain-text input (RULER's essay haystack, a key word list): Moby-Dick is 1.2 MB and a 2048K-token haystack
// about 10 MB of English; read whole, so a FIFO, a device or a runaway file is refused before it is
// (read_regular_file).
constexpr int64_t kTextMaxBytes = int64_t(64) << 20;
// Arrays and objects nest at most this deep (ours nest 3 deep), so no later walk over a value can run out of stack.
constexpr int kJsonMaxDepth = 64;
// An error message quotes at most this many bytes of an input value (a JSON value or key, a string of a file or of
// the command line; excerpt() in model/json_field.hpp): enough to recognise it, never a megabyte of terminal.
constexpr size_t kQuoteMaxChars = 200;

// Ranges of the integers of a config.json, from what each field means: far past any real model (the released one
// has 32 layers, 32 heads of 128, hidden 4096, vocabulary 73,448, 524,288 positions), and small enough that every
// size derived from them (q_dim, tensor element counts, bytes per token) stays within its type. A value outside is
// an error naming the field, never a number truncated to 32 bits.
constexpr int64_t kMaxLayers = 4096;             // num_hidden_layers
constexpr int64_t kMaxHeads = 4096;              // attention heads of either mixer
constexpr int64_t kMaxHeadDim = 4096;            // head_dim, lightning_head_dim
constexpr int64_t kMaxWidth = int64_t(1) << 20;  // hidden_size, intermediate_size, dim_model_base
constexpr int64_t kMaxVocab = INT32_MAX;         // token ids are 32-bit
// max_position_embeddings: the model's RoPE angles are an fp32 table, exact only below 2^24 positions (32x the
// released length); with extrapolation a sequence stays below 2^26 tokens, so its token buffer is at most 256 MB.
constexpr int64_t kMaxPositions = int64_t(1) << 24;
constexpr int64_t kMaxBlock = int64_t(1) << 16;  // sparse kernel_size, kernel_stride, block_size
// The floating fields of a config.json: a range from what each one means, with the reason the message gives. JSON
// numbers are finite already (1e999 is a parse error); the ranges also keep each value the CUDA path reads a normal
// fp32 number (it holds them in fp32).
struct FloatRange {
  double lo = 0, hi = 0;
  bool lo_open = false;  // (lo, hi] instead of [lo, hi]
  const char* why = "";  // what the value is, for the message
  bool contains(double v) const { return (lo_open ? v > lo : v >= lo) && v <= hi; }  // false for NaN
  std::string interval() const;                                                      // "(1, 1e+12]"
  std::string text() const;  // "a number in (1, 1e+12] (the RoPE base: 10000 in MiniCPM-SALA)"
};
// rms_norm_eps guards a mean square of O(1) activations: real models use 1e-5 or 1e-6; past 0.1 it swamps them,
// below 1e-12 it guards nothing.
constexpr FloatRange kRmsNormEps{1e-12, 0.1, false, "the epsilon added to a mean square: 1e-6 in MiniCPM-SALA"};
// rope_theta: 1e4 here, up to ~1e7 elsewhere; at 1 or below the rotation frequencies stop falling with the dim.
constexpr FloatRange kRopeTheta{1, 1e12, true, "the RoPE base: 10000 in MiniCPM-SALA"};
// scale_emb multiplies the embedding rows (12 here): outside this the stream starts far from RMS 1.
constexpr FloatRange kScaleEmb{1e-6, 1e6, false, "the embedding multiplier: 12 in MiniCPM-SALA"};
// scale_depth: each branch enters the residual times scale_depth / sqrt(layers) (1.4 here); zero or negative
// removes or flips every branch, past 100 the branches swamp the stream.
constexpr FloatRange kScaleDepth{1e-3, 100, false, "the residual branch multiplier's numerator: 1.4 in MiniCPM-SALA"};
// initializer_range is the std of the initial weights (0.02 in HF configs); descriptive here, but a std.
constexpr FloatRange kInitializerRange{0, 1, false, "the std of the initial weights: 0.02 or 0.1"};
// attention_dropout is a probability (0 at inference).
constexpr FloatRange kAttentionDropout{0, 1, false, "a dropout probability"};
// The scales of `salasim op` (the op definitions, ops/<name>.cpp) are the model's derived ones: a softmax or GLA output
// scale is head_dim^-0.5 (1/64 .. 1/sqrt(2) for head dims 2 .. 4096); the residual branch scale is scale_depth /
// sqrt(layers). The lower ends keep them normal fp32 numbers: a tau of 1e-300 is 0 on the GPU.
constexpr FloatRange kHeadScale{1e-6, 1, false, "head_dim^-0.5 in the model"};
constexpr FloatRange kResidualScale{1e-6, 100, false, "scale_depth / sqrt(layers) in the model"};
// The logits are divided by hidden_size / dim_model_base, muP's width multiplier (16 here): a base wider than the
// model (a divisor below 1) would multiply them instead, so config.json needs dim_model_base <= hidden_size.
constexpr FloatRange kLogitDivisor{1, double(kMaxWidth), false, "hidden_size / dim_model_base: 16 in MiniCPM-SALA"};

// Hardware profiles (reports/hw/*.json): one card's ceilings, far around the H200's (786e12 FLOP/s, 4.3e12 B/s,
// 3.9e12 exp/s, 140 GiB), so a typo of a few orders of magnitude is refused, not turned into a nonsense table.
constexpr FloatRange kHwFlops{1e9, 1e18, false, "dense bf16 FLOP/s of one card: 786e12 on the H200"};
constexpr FloatRange kHwBandwidth{1e8, 1e15, false, "device memory bytes/s: 4.3e12 on the H200"};
constexpr FloatRange kHwExp{1e6, 1e16, false, "exponentials/s: 3.9e12 on the H200"};
// An efficiency factor is the fraction of a ceiling achieved (fitted ones are 0.3 .. 1): below 0.1% a prediction is
// a thousand times the floor, and a factor of 1e-300 turned seconds into infinity.
constexpr FloatRange kHwEfficiency{1e-3, 10, false, "an efficiency factor, 1.0 = the ceiling"};
constexpr int64_t kMaxHwMemoryBytes = int64_t(1) << 50;  // 1 PiB: memory_bytes of one card
// Measured and published times (reports/measured, reports/paper), seconds or milliseconds: from a nanosecond to
// 1e7 (115 days in seconds), so the calibration's sums of products neither underflow to 0 nor overflow.
constexpr FloatRange kMeasuredTime{1e-9, 1e7, false, "a measured time"};
constexpr FloatRange kMeasuredPart{0, 1e7, false, "a measured time, or 0"};

// Tokenizer files: a SentencePiece model is a few MB (MiniCPM's 1.2 MB), read whole by libsentencepiece; Hugging
// Face adds tens to hundreds of tokens (chat markers), each matched at every position of a prompt.
constexpr int64_t kTokenizerMaxBytes = int64_t(256) << 20;
constexpr int64_t kMaxAddedTokens = 65536;

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
