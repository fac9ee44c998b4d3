// The forward pass of MiniCPM-SALA as an ordered list of steps, each naming the op of the registry (ops/op.hpp) that
// computes it, the checkpoint tensors it reads, the taps recorded after it and the reference file that computes it
// (the statement is found in the source tree at run time from the tap and the op's function names: find_step). One list
// drives `salasim explain` (op cards, layer cards) and the architecture page's flow and treemap, so the views cannot
// disagree with each other or with the inventory.
#pragma once
#include <string>
#include <vector>

#include "model/config.hpp"
#include "model/inventory.hpp"
#include "reports/source_lines.hpp"

namespace salasim::reports {

// Where a step sits: before the layers, in every layer before the mixer, in one mixer, after it, after the layers.
enum class Part { Entry, LayerPre, Lightning, Sparse, LayerPost, Exit };
const char* part_name(Part p);  // "entry", "every layer", "lightning", "sparse", "every layer", "exit"

struct FlowStep {
  Part part = Part::Entry;
  std::string op;                    // an op of the registry (ops/op.hpp); "" for bookkeeping (the KV cache)
  std::string label;                 // "q, k, v projections"
  std::string text;                  // the equation with the config's numbers, plain text
  std::string latex;                 // the same in LaTeX
  std::string in, out;               // shapes with the config's numbers
  std::vector<std::string> tensors;  // checkpoint names; inside layers relative to "model.layers.{i}."
  std::vector<std::string> taps;     // tap kinds recorded after the step (model/taps.hpp, compare/tolerance.cpp)
  std::string file;                  // the reference file that computes it
  std::string definition;            // for a step without taps: the function there that does it ("cache_append")
  std::string note;                  // what it keeps besides weights, or when it runs
};

// Every step of the config's forward pass in order: entry, layer-pre, Lightning mixer, sparse mixer, layer-post,
// exit. Steps a config switches off (output gates, norms, RoPE) are left out, as the reference skips them.
std::vector<FlowStep> forward_flow(const ModelConfig& c);

// The steps of one layer of the given mixer: layer-pre, that mixer, layer-post.
std::vector<FlowStep> layer_steps(const std::vector<FlowStep>& flow, Mixer m);

// The statement of `file` that computes the step (source_lines.hpp find_step, from its taps and its op's reference
// functions; a step without taps: the definition it names).
SourceLine step_source(const FlowStep& s);

// The layers a part repeats over ({-1} for entry and exit) and the full checkpoint name of a step's tensor there.
std::vector<int> part_layers(const ModelConfig& c, Part p);
std::string tensor_at(const std::string& tensor, int layer);
std::string layer_ranges(const std::vector<int>& layers);  // "1-8, 10-15, 18-21" for sorted layers; "-" if none

// One step's parameters, summed from the inventory over `layers` (part_layers of its part, or some of them): per
// instance (one layer, or the one non-layer instance) and across them. Instances whose counts differ are an
// error (the inventory is built per layer type).
struct StepParams {
  int64_t each = 0;
  int64_t instances = 0;
  int64_t total = 0;
  std::vector<const TensorSpec*> first;  // the tensors of the first instance, in the step's order
};
StepParams step_params(const std::vector<TensorSpec>& inv, const FlowStep& s, const std::vector<int>& layers);

}  // namespace salasim::reports
