// compare_taps: the verdict of every tap (hard rules first, then the gate of its tolerance row).
#include "compare/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "model/error.hpp"

namespace salasim {

namespace {

void add_why(TapResult& row, const std::string& why) {
  row.why += (row.why.empty() ? "" : "; ") + why;
}

std::string at_index(const Tap& t, int64_t flat) { return format_shape(unflatten(t.shape, flat)); }

// "/prefill/layer_00/sparse/select/blocks" -> "/prefill/layer_00/sparse/select/scores"
std::string scores_name(const std::string& blocks_name) {
  return blocks_name.substr(0, blocks_name.rfind('/') + 1) + "scores";
}

// Counts non-finite values that the row does not allow: all of them, or, for rows where infinities must match the
// reference, those that do not. Returns a reason, or "" when there are none.
std::string nonfinite_reason(const char* side, const TensorMetrics& m, const ToleranceRow& row, const Tap& ref,
                             const Tap& other) {
  const int64_t bad = row.inf_must_match ? m.unmatched_nonfinite : m.other_nonfinite;
  if (bad == 0) return "";
  std::string where;
  if (m.first_unmatched >= 0)
    where = fmt::format(" (first at {}: reference {:.6g}, {} {:.6g})", at_index(ref, m.first_unmatched),
                        ref.data[size_t(m.first_unmatched)], side, other.data[size_t(m.first_unmatched)]);
  return fmt::format("{} holds {} {}{}", side, bad, row.inf_must_match ? "NaN/Inf not matching the reference" : "NaN/Inf",
                     where);
}

void gate_float(TapResult& row, const ToleranceRow& tol, const Tap& ref, const Tap* peer, const Tap& be) {
  const TensorMetrics m = tensor_metrics(row.name, ref, be);
  row.metrics = m;
  if (!tol.inf_must_match && m.ref_nonfinite)
    add_why(row, fmt::format("the reference holds {} NaN/Inf", m.ref_nonfinite));
  if (std::string r = nonfinite_reason("backend", m, tol, ref, be); !r.empty()) add_why(row, r);
  if (m.other_all_zero && !m.ref_all_zero) add_why(row, "backend is all zero where the reference is not");

  double peer_rel = 0, peer_max = 0;
  if (peer) {
    if (peer->shape != ref.shape) {
      add_why(row, fmt::format("peer shape {} differs from the reference's {}: no allowance", format_shape(peer->shape),
                               format_shape(ref.shape)));
    } else {
      const TensorMetrics pm = tensor_metrics(row.name, ref, *peer);
      row.peer_metrics = pm;
      if (std::string r = nonfinite_reason("peer", pm, tol, ref, *peer); !r.empty()) add_why(row, r + ": no allowance");
      peer_rel = pm.rel_rms;
      peer_max = pm.max_err;
    }
  }
  row.rel_rms = apply_gate(m.rel_rms, peer_rel, tol.mult, tol.rms_floor);
  row.max_err = apply_gate(m.max_err, peer_max, tol.max_mult, tol.max_floor);
  if (!row.rel_rms.pass)
    add_why(row, fmt::format("rel-RMS {:.3e} > allowed {:.3e}", row.rel_rms.err, row.rel_rms.allowed));
  if (!row.max_err.pass)
    add_why(row, fmt::format("max-err {:.3e} > allowed {:.3e} at {} (reference {:.6g}, backend {:.6g}; RMS {:.4g})",
                             row.max_err.err, row.max_err.allowed, format_shape(m.worst_err_at), m.ref_at_err,
                             m.other_at_err, m.ref_rms));
}

void gate_selection(TapResult& row, const ToleranceRow& tol, const TapMap& ref_map, const Tap& ref, const Tap& be) {
  const auto sc = ref_map.find(scores_name(row.name));
  const Tap* scores = sc == ref_map.end() ? nullptr : &sc->second;
  const SelectionReport s = compare_selection(row.name, ref, be, scores, tol.tie_band);
  row.selection = s;
  if (s.pass()) return;
  const SelectionMismatch& f = *s.first_out_of_band;
  add_why(row, fmt::format("{} selected blocks differ outside the tie band{}; first: query {}, group {}, block {} "
                           "selected by the {} only (reference score {:.6g}, boundary {:.6g})",
                           s.out_of_band, scores ? "" : " (no reference scores: exact comparison)", f.query, f.group,
                           f.block, f.in_reference ? "reference" : "backend", f.score, f.boundary));
}

}  // namespace

const TapResult* CompareReport::first_divergence() const {
  for (const TapResult& r : rows)
    if (!r.pass) return &r;
  return nullptr;
}

CompareReport compare_taps(const TapMap& ref, const TapMap* peer, const TapMap& backend, const ToleranceTable& table) {
  CompareReport rep;
  rep.with_peer = peer != nullptr;
  std::set<std::string> names;
  for (const auto& [n, t] : ref) names.insert(n);
  for (const auto& [n, t] : backend) names.insert(n);

  for (const std::string& name : names) {
    TapResult row;
    row.name = name;
    row.phase = tap_phase(name);
    row.kind = tap_kind(name);
    row.layer = tap_layer(name);
    const ToleranceRow& tol = tolerance_row(table, row.kind);  // throws: a new tap kind needs a row
    row.gate = tol.gate;
    const auto r = ref.find(name), b = backend.find(name);
    const Tap* p = nullptr;
    if (peer) {
      const auto it = peer->find(name);
      if (it != peer->end()) p = &it->second;
    }
    row.in_reference = r != ref.end();
    row.in_backend = b != backend.end();
    row.in_peer = p != nullptr;
    row.order = row.in_reference ? r->second.order : b->second.order;

    if (!row.in_reference) {
      add_why(row, "missing in the reference");
      rep.only_in_backend.push_back(name);
    } else if (!row.in_backend) {
      add_why(row, "missing in the backend");
      rep.only_in_reference.push_back(name);
    } else if (peer && !p) {
      add_why(row, "missing in the peer: no allowance");
    } else if (r->second.shape != b->second.shape) {
      add_why(row, fmt::format("backend shape {} differs from the reference's {}", format_shape(b->second.shape),
                               format_shape(r->second.shape)));
    } else if (tol.gate == Gate::Float) {
      if (r->second.integer || b->second.integer)
        add_why(row, fmt::format("{} is an integer tap where the table expects a float tensor",
                                 r->second.integer ? "the reference" : "the backend"));
      else
        gate_float(row, tol, r->second, p, b->second);
    } else {
      if (!r->second.integer || !b->second.integer)
        add_why(row, fmt::format("{} is a float tap where the table expects integer block ids",
                                 r->second.integer ? "the backend" : "the reference"));
      else
        gate_selection(row, tol, ref, r->second, b->second);
    }
    row.pass = row.why.empty();
    (row.pass ? rep.passed : rep.failed) += 1;
    rep.rows.push_back(std::move(row));
  }
  std::stable_sort(rep.rows.begin(), rep.rows.end(), [](const TapResult& a, const TapResult& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
  return rep;
}

}  // namespace salasim
