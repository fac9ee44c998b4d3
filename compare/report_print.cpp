// Printing a CompareReport: a fixed-width table meant to stay readable at ~400 taps, and JSON.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "compare/report.hpp"

namespace salasim {

namespace {

constexpr size_t kNumbersWidth = 56;  // the six number columns below

std::string sci(double v) { return std::isfinite(v) ? fmt::format("{:9.2e}", v) : fmt::format("{:>9}", v); }

std::string ratio(double v) {
  if (!std::isfinite(v)) return fmt::format("{:>7}", v);
  return v < 1000 ? fmt::format("{:7.2f}", v) : fmt::format("{:7.1e}", v);
}

std::string layer_col(int layer) { return layer < 0 ? "-" : fmt::format("{:02d}", layer); }

std::string row_numbers(const TapResult& r) {
  if (r.selection) {
    const SelectionReport& s = *r.selection;
    return fmt::format("selection: {}/{} rows differ, {} tie{}, {} out{}", s.rows_differing, s.rows, s.in_band,
                       s.in_band == 1 ? "" : "s", s.out_of_band, s.have_scores ? "" : " (no scores)");
  }
  if (!r.metrics) return "-";
  return fmt::format("{} {} {}  {} {} {}", sci(r.rel_rms.err), sci(r.rel_rms.allowed), ratio(r.rel_rms.ratio),
                     sci(r.max_err.err), sci(r.max_err.allowed), ratio(r.max_err.ratio));
}

nlohmann::json num(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

nlohmann::json gate_json(const GateResult& g) {
  return {{"err", num(g.err)}, {"peer_err", num(g.peer_err)}, {"allowed", num(g.allowed)},
          {"ratio", num(g.ratio)}, {"pass", g.pass}};
}

nlohmann::json metrics_json(const TensorMetrics& m) {
  return {{"numel", m.numel},
          {"compared", m.compared},
          {"max_abs", num(m.max_abs)},
          {"worst_index", m.worst},
          {"worst_at", m.worst_at},
          {"reference_at_worst", num(m.ref_at)},
          {"value_at_worst", num(m.other_at)},
          {"max_err", num(m.max_err)},
          {"worst_err_at", m.worst_err_at},
          {"reference_at_worst_err", num(m.ref_at_err)},
          {"value_at_worst_err", num(m.other_at_err)},
          {"rel_rms", num(m.rel_rms)},
          {"nmse", num(m.nmse)},
          {"cosine", num(m.cosine)},
          {"reference_rms", num(m.ref_rms)},
          {"nonfinite", {{"reference", m.ref_nonfinite}, {"value", m.other_nonfinite},
                         {"matched_inf", m.matched_inf}, {"unmatched", m.unmatched_nonfinite}}},
          {"all_zero", {{"reference", m.ref_all_zero}, {"value", m.other_all_zero}}}};
}

}  // namespace

std::string format_report(const CompareReport& r, const PrintOptions& opt) {
  std::string out;
  out += r.with_peer ? "allowed = mult x err(peer, reference) + floor (rel-RMS: mult 2; max-err: max mult 3), per tap kind (compare/tolerance.cpp)\n"
                     : "no peer: allowed = the floors alone (two bf16 roundings); errors that compound through layers "
                       "may exceed them\n";
  out += fmt::format("{:<11} {:>5} {:<22} {:>9} {:>9} {:>7}  {:>9} {:>9} {:>7}  {}\n", "phase", "layer", "tap",
                     "rel-RMS", "allowed", "ratio", "max-err", "allowed", "ratio", "verdict");
  int hidden = 0;
  for (const TapResult& row : r.rows) {
    if (opt.failures_only && row.pass) {
      ++hidden;
      continue;
    }
    std::string nums = row_numbers(row);
    if (nums.size() < kNumbersWidth) nums += std::string(kNumbersWidth - nums.size(), ' ');
    out += fmt::format("{:<11} {:>5} {:<22} {}  {}\n", row.phase, layer_col(row.layer), row.kind, nums,
                       row.pass ? "pass" : "FAIL");
    if (!row.pass) out += fmt::format("    {}: {}\n", row.name, row.why);
  }
  if (hidden) out += fmt::format("({} passing taps not shown)\n", hidden);
  for (const std::string& n : r.only_in_reference) out += fmt::format("only in the reference: {}\n", n);
  for (const std::string& n : r.only_in_backend) out += fmt::format("only in the backend:   {}\n", n);
  if (const TapResult* f = r.first_divergence())
    out += fmt::format("FIRST DIVERGENCE: {} (order {}): {}\n", f->name, f->order, f->why);
  if (r.pass())
    out += fmt::format("all {} taps pass\n", r.rows.size());
  else
    out += fmt::format("{} taps: {} pass, {} FAIL\n", r.rows.size(), r.passed, r.failed);
  return out;
}

nlohmann::json report_json(const CompareReport& r) {
  nlohmann::json j;
  j["with_peer"] = r.with_peer;
  j["allowance"] = r.with_peer ? "mult * err(peer, reference) + floor" : "floor (no peer)";
  j["taps"] = r.rows.size();
  j["passed"] = r.passed;
  j["failed"] = r.failed;
  j["pass"] = r.pass();
  const TapResult* f = r.first_divergence();
  j["first_divergence"] = f ? nlohmann::json(f->name) : nlohmann::json(nullptr);
  j["only_in_reference"] = r.only_in_reference;
  j["only_in_backend"] = r.only_in_backend;
  j["rows"] = nlohmann::json::array();
  for (const TapResult& row : r.rows) {
    nlohmann::json t = {{"name", row.name},   {"phase", row.phase}, {"layer", row.layer}, {"kind", row.kind},
                        {"order", row.order}, {"gate", row.gate == Gate::Float ? "float" : "selection"},
                        {"verdict", row.pass ? "pass" : "fail"}, {"why", row.why}};
    if (row.metrics) {
      t["rel_rms"] = gate_json(row.rel_rms);
      t["max_err"] = gate_json(row.max_err);
      t["backend"] = metrics_json(*row.metrics);
    }
    if (row.peer_metrics) t["peer"] = metrics_json(*row.peer_metrics);
    if (row.selection) {
      const SelectionReport& s = *row.selection;
      t["selection"] = {{"band", s.band},         {"have_scores", s.have_scores}, {"rows", s.rows},
                        {"rows_differing", s.rows_differing}, {"in_band", s.in_band}, {"out_of_band", s.out_of_band}};
      if (s.first_out_of_band) {
        const SelectionMismatch& m = *s.first_out_of_band;
        t["selection"]["first_out_of_band"] = {{"query", m.query},         {"group", m.group},
                                               {"block", m.block},         {"in_reference", m.in_reference},
                                               {"score", num(m.score)},    {"boundary", num(m.boundary)}};
      }
    }
    j["rows"].push_back(std::move(t));
  }
  return j;
}

}  // namespace salasim
