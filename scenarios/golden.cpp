// Goldens: the subset a golden keeps, its file, and the check against a fresh truth run.
#include "scenarios/golden.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "model/error.hpp"
#include "scenarios/backend.hpp"

namespace salasim {

namespace {

constexpr const char* kFormat = "1";

bool is_decode(const std::string& phase) { return phase.rfind("decode_", 0) == 0; }

Tap cut_rows(const Tap& t, const std::vector<int64_t>& rows, const std::string& name) {
  const int64_t per = t.numel() / std::max<int64_t>(1, t.shape.at(0));
  Tap out = t;
  out.shape[0] = int64_t(rows.size());
  out.data.clear();
  for (int64_t r : rows) {
    if (r >= t.shape[0]) fail("golden: tap {} has {} rows, row {} was asked for", name, t.shape[0], r);
    out.data.insert(out.data.end(), t.data.begin() + r * per, t.data.begin() + (r + 1) * per);
  }
  return out;
}

std::string join_ints(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }

std::vector<int64_t> parse_ints(const std::string& s, const std::string& path, const char* attr) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      out.push_back(std::stoll(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      fail("{}: file attribute '{}' is '{}', expected comma-separated integers", path, attr, s);
    }
  }
  return out;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

}  // namespace

std::vector<int64_t> golden_rows(const Scenario& s) {
  const int64_t n = int64_t(s.prompt.size());
  const int64_t piece = s.prefill_chunk > 0 ? s.prefill_chunk : n;
  const int64_t first_choice = int64_t(s.cfg.sparse.k_sel()) * s.cfg.sparse.block_size;  // qb >= K_sel
  std::set<int64_t> rows = {0, int64_t(s.cfg.sparse.block_size), first_choice, s.cfg.sparse.dense_len - 1,
                            s.cfg.sparse.dense_len, n - 2, n - 1};
  for (int64_t b = piece; b < n; b += piece) rows.insert({b - 1, b});
  std::vector<int64_t> out;
  for (int64_t r : rows)
    if (r >= 0 && r < n) out.push_back(r);
  return out;
}

bool whole_sequence_tap(const std::string& name) {
  const std::string k = tap_kind(name);
  return k == "lightning/gla/state" || k == "sparse/compress_k/k1" || k == "sparse/compress_k/k2" ||
         k == "final/logits";
}

TapMap golden_subset(const TapMap& taps, const std::vector<int64_t>& rows, int decode_steps) {
  const std::string last = decode_steps > 0 ? decode_phase(decode_steps - 1) : "";
  TapMap out;
  for (const auto& [name, t] : taps) {
    const std::string phase = tap_phase(name);
    if (whole_sequence_tap(name)) {  // states grow by a token a step: the prefill's and the last step's suffice
      if (phase == "prefill" || phase == last || tap_kind(name) == "final/logits") out[name] = t;
    } else if (phase == "prefill") {
      out[name] = cut_rows(t, rows, name);
    } else if (is_decode(phase)) {
      out[name] = t;
    }
  }
  return out;
}

TapMap golden_cut(const TapMap& full, const TapMap& names, const std::vector<int64_t>& rows) {
  TapMap out;
  for (const auto& [name, g] : names) {
    auto it = full.find(name);
    if (it == full.end()) continue;  // compare_taps reports it missing
    out[name] = tap_phase(name) == "prefill" && !whole_sequence_tap(name) ? cut_rows(it->second, rows, name)
                                                                          : it->second;
  }
  return out;
}

void write_golden(const std::string& path, const Golden& g) {
  DumpInfo info;
  info.scenario = g.meta.scenario;
  info.git_revision = g.meta.git_revision;
  info.backend = g.meta.backend;
  info.created = g.meta.created;
  info.extra = {{"golden_format", kFormat},
                {"golden_device", g.meta.device},
                {"golden_gpu_source_hash", g.meta.gpu_hash},
                {"golden_gpu_source_files", fmt::format("{}", fmt::join(g.meta.gpu_files, ","))},
                {"golden_scenario_path", g.meta.scenario_path},
                {"golden_prefill_rows", join_ints(g.meta.rows)}};
  write_taps(path, g.taps, info, FloatStorage::Float32, /*compress=*/true);
}

Golden read_golden(const std::string& path) {
  TapDump d = read_taps(path);
  auto attr = [&](const char* k) -> const std::string& {
    auto it = d.info.extra.find(k);
    if (it == d.info.extra.end())
      fail("{}: file attribute '{}' is missing: a tap dump, but not a golden (salasim golden record writes them)", path, k);
    return it->second;
  };
  if (attr("golden_format") != kFormat)
    fail("{}: file attribute 'golden_format' is '{}', this build reads '{}'", path, attr("golden_format"), kFormat);
  Golden g;
  g.meta.scenario = d.info.scenario;
  g.meta.git_revision = d.info.git_revision;
  g.meta.backend = d.info.backend;
  g.meta.created = d.info.created;
  g.meta.device = attr("golden_device");
  g.meta.gpu_hash = attr("golden_gpu_source_hash");
  g.meta.gpu_files = split_commas(attr("golden_gpu_source_files"));
  g.meta.scenario_path = attr("golden_scenario_path");
  g.meta.rows = parse_ints(attr("golden_prefill_rows"), path, "golden_prefill_rows");
  g.taps = std::move(d.taps);
  if (g.taps.empty()) fail("{}: a golden without taps", path);
  return g;
}

Golden make_golden(const Scenario& s, const std::string& scenario_path, const BackendRun& run,
                   const std::string& backend_name, const SourceHash& gpu_hash, const std::string& git_revision) {
  Golden g;
  g.meta.scenario = s.name;
  g.meta.scenario_path = scenario_path;
  g.meta.backend = backend_name;
  g.meta.device = run.device;
  g.meta.gpu_hash = gpu_hash.hex;
  g.meta.gpu_files = gpu_hash.files;
  g.meta.rows = golden_rows(s);
  g.meta.git_revision = git_revision;
  g.taps = golden_subset(run.taps, g.meta.rows, s.decode_steps);
  return g;
}

TapFilter golden_filter(const Golden& g) {
  TapFilter f;
  for (const auto& [name, t] : g.taps) f.patterns.push_back(name);
  return f;
}

std::string rerecord_command(const std::string& scenario_path, const std::string& golden_path) {
  return fmt::format("build/salasim golden record --scenario {} --out {}", scenario_path, golden_path);
}

GoldenCheck check_golden(const Golden& g, const Truth& truth, const SourceHash& current, const std::string& golden_path) {
  return check_golden_cut(g, golden_cut(truth.ref, g.taps, g.meta.rows), golden_cut(truth.peer, g.taps, g.meta.rows),
                          current, golden_path);
}

KeepTaps golden_keep(const Golden& g) {
  KeepTaps k;
  for (const auto& [name, t] : g.taps) k.names.insert(name);
  k.rows = g.meta.rows;
  k.what = "golden";
  return k;
}

GoldenCheck check_golden_cut(const Golden& g, const TapMap& ref, const TapMap& peer, const SourceHash& current,
                             const std::string& golden_path) {
  GoldenCheck c;
  c.report = compare_taps(ref, &peer, g.taps);
  c.recorded_hash = g.meta.gpu_hash;
  c.current_hash = current.hex;
  c.rerecord = rerecord_command(g.meta.scenario_path, golden_path);
  return c;
}

std::string format_golden_check(const GoldenCheck& c, const Golden& g, const std::string& golden_path, bool all_rows) {
  const GoldenMeta& m = g.meta;
  const std::string by = backend_label(m.backend, m.device);
  std::string out = fmt::format(
      "golden {}: {} taps recorded by {} ({}, git {}), scenario {} ({}), prefill rows {}\n", golden_path,
      g.taps.size(), by, m.created, m.git_revision.empty() ? "?" : m.git_revision, m.scenario, m.scenario_path,
      fmt::join(m.rows, ","));
  out += fmt::format("GPU sources ({}): recorded {}, now {}: {}\n", gpu_sources_label(), c.recorded_hash,
                     c.current_hash, c.hash_ok() ? "match" : "DIFFER (changed since the golden was recorded)");
  out += format_report(c.report, PrintOptions{!all_rows});
  if (c.pass()) {
    out += "golden check: PASS\n";
  } else {
    std::string what;
    if (!c.report.pass()) what = fmt::format("{} tap(s) outside tolerance", c.report.failed);
    if (!c.hash_ok()) what += std::string(what.empty() ? "" : " and ") + "the GPU sources changed";
    out += fmt::format("golden check: FAIL ({}).\n", what);
    out += fmt::format("If the change is intended, verify it on a GPU and re-record the golden there:\n  {}\n",
                       c.rerecord);
  }
  return out;
}

}  // namespace salasim
