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

// "/prefill/layer_00/sparse/select/blocks" -> "/prefill/layer_00/sparse/select/scores"
std::string scores_name(const std::string& blocks_name) {
  return blocks_name.substr(0, blocks_name.rfind('/') + 1) + "scores";
}

// Counts non-finite values that the row does not allow: all of them, or, for rows where infinities must match the
// reference, those that do not. Returns a reason, or "" when there are none.
std::string nonfinite_reason(const char* side, const TensorMetrics& m, const ToleranceRow& row) {
  const int64_t bad = row.inf_must_match ? m.unmatched_nonfinite : m.other_nonfinite;
  if (bad == 0) return "";
  std::string where;
  if (m.first_unmatched >= 0)
    where = fmt::format(" (first at {}: reference {:.6g}, {} {:.6g})", format_shape(m.first_unmatched_at),
                        m.ref_at_unmatched, side, m.other_at_unmatched);
  return fmt::format("{} holds {} {}{}", side, bad, row.inf_must_match ? "NaN/Inf not matching the reference" : "NaN/Inf",
                     where);
}

void gate_float(TapResult& row, const ToleranceRow& tol, bool with_peer, const TapFacts& f) {
  const TensorMetrics& m = *f.metrics;
  row.metrics = m;
  if (!tol.inf_must_match && m.ref_nonfinite)
    add_why(row, fmt::format("the reference holds {} NaN/Inf", m.ref_nonfinite));
  if (std::string r = nonfinite_reason("backend", m, tol); !r.empty()) add_why(row, r);
  if (m.other_all_zero && !m.ref_all_zero) add_why(row, "backend is all zero where the reference is not");

  double peer_rel = 0, peer_max = 0;
  if (with_peer) {
    if (f.peer_shape != f.ref_shape) {
      add_why(row, fmt::format("peer shape {} differs from the reference's {}: no allowance", format_shape(f.peer_shape),
                               format_shape(f.ref_shape)));
    } else {
      const TensorMetrics& pm = *f.peer_metrics;
      row.peer_metrics = pm;
      if (std::string r = nonfinite_reason("peer", pm, tol); !r.empty()) add_why(row, r + ": no allowance");
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

void gate_selection(TapResult& row, const SelectionReport& s) {
  row.selection = s;
  if (s.pass()) return;
  const SelectionMismatch& f = *s.first_out_of_band;
  add_why(row, fmt::format("{} selected blocks differ outside the tie band{}; first: query {}, group {}, block {} "
                           "selected by the {} only (reference score {:.6g}, boundary {:.6g})",
                           s.out_of_band, s.have_scores ? "" : " (no reference scores: exact comparison)", f.query,
                           f.group, f.block, f.in_reference ? "reference" : "backend", f.score, f.boundary));
}

}  // namespace

const TapResult* CompareReport::first_divergence() const {
  for (const TapResult& r : rows)
    if (!r.pass) return &r;
  return nullptr;
}

TapResult judge_tap(const std::string& name, const ToleranceRow& tol, bool with_peer, const TapFacts& f) {
  TapResult row;
  row.name = name;
  row.phase = tap_phase(name);
  row.kind = tap_kind(name);
  row.layer = tap_layer(name);
  row.gate = tol.gate;
  row.in_reference = f.in_reference;
  row.in_backend = f.in_backend;
  row.in_peer = f.in_peer;
  row.order = f.order;
  if (!row.in_reference) {
    add_why(row, "missing in the reference");
  } else if (!row.in_backend) {
    add_why(row, "missing in the backend");
  } else if (with_peer && !row.in_peer) {
    add_why(row, "missing in the peer: no allowance");
  } else if (f.ref_shape != f.backend_shape) {
    add_why(row, fmt::format("backend shape {} differs from the reference's {}", format_shape(f.backend_shape),
                             format_shape(f.ref_shape)));
  } else if (tol.gate == Gate::Float) {
    if (f.ref_integer || f.backend_integer)
      add_why(row, fmt::format("{} is an integer tap where the table expects a float tensor",
                               f.ref_integer ? "the reference" : "the backend"));
    else
      gate_float(row, tol, with_peer, f);
  } else {
    if (!f.ref_integer || !f.backend_integer)
      add_why(row, fmt::format("{} is a float tap where the table expects integer block ids",
                               f.ref_integer ? "the backend" : "the reference"));
    else
      gate_selection(row, *f.selection);
  }
  row.pass = row.why.empty();
  return row;
}

void add_row(CompareReport& rep, TapResult row) {
  if (!row.in_reference)
    rep.only_in_backend.push_back(row.name);
  else if (!row.in_backend)
    rep.only_in_reference.push_back(row.name);
  (row.pass ? rep.passed : rep.failed) += 1;
  rep.rows.push_back(std::move(row));
}

void finish_report(CompareReport& rep) {
  std::stable_sort(rep.rows.begin(), rep.rows.end(), [](const TapResult& a, const TapResult& b) {
    return a.order != b.order ? a.order < b.order : a.name < b.name;
  });
}

CompareReport compare_taps(const TapMap& ref, const TapMap* peer, const TapMap& backend, const ToleranceTable& table) {
  CompareReport rep;
  rep.with_peer = peer != nullptr;
  std::set<std::string> names;
  for (const auto& [n, t] : ref) names.insert(n);
  for (const auto& [n, t] : backend) names.insert(n);

  for (const std::string& name : names) {
    const ToleranceRow& tol = tolerance_row(table, tap_kind(name));  // throws: a new tap kind needs a row
    const auto r = ref.find(name), b = backend.find(name);
    const Tap* p = nullptr;
    if (peer) {
      const auto it = peer->find(name);
      if (it != peer->end()) p = &it->second;
    }
    TapFacts f;
    f.in_reference = r != ref.end();
    f.in_backend = b != backend.end();
    f.in_peer = p != nullptr;
    f.order = f.in_reference ? r->second.order : b->second.order;
    if (f.in_reference && f.in_backend && (!peer || p)) {
      const Tap &rt = r->second, &bt = b->second;
      f.ref_shape = rt.shape;
      f.backend_shape = bt.shape;
      f.ref_integer = rt.integer;
      f.backend_integer = bt.integer;
      if (p) f.peer_shape = p->shape;
      if (rt.shape == bt.shape && tol.gate == Gate::Float && !rt.integer && !bt.integer) {
        f.metrics = tensor_metrics(name, rt, bt);
        if (p && p->shape == rt.shape) f.peer_metrics = tensor_metrics(name, rt, *p);
      } else if (rt.shape == bt.shape && tol.gate == Gate::Selection && rt.integer && bt.integer) {
        const auto sc = ref.find(scores_name(name));
        f.selection = compare_selection(name, rt, bt, sc == ref.end() ? nullptr : &sc->second, tol.tie_band);
      }
    }
    add_row(rep, judge_tap(name, tol, peer != nullptr, f));
  }
  finish_report(rep);
  return rep;
}

}  // namespace salasim
