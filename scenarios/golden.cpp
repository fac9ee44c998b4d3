// Goldens: the subset a golden keeps, its file, and the check against a fresh truth run.
#include "scenarios/golden.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

#include "model/error.hpp"
#include "model/json_field.hpp"
#include "scenarios/backend.hpp"

namespace salasim {

namespace {

bool is_decode(const std::string& phase) { return phase.rfind("decode_", 0) == 0; }

void check_rows(int64_t have, const std::vector<int64_t>& rows, const std::string& name) {
  for (int64_t r : rows)
    if (r >= have) fail("golden: tap {} has {} rows, row {} was asked for", name, have, r);
}

Tap cut_rows(const Tap& t, const std::vector<int64_t>& rows, const std::string& name) {
  check_rows(t.shape.at(0), rows, name);
  const int64_t per = t.numel() / std::max<int64_t>(1, t.shape.at(0));
  Tap out = t;
  out.shape[0] = int64_t(rows.size());
  out.data.clear();
  for (int64_t r : rows) out.data.insert(out.data.end(), t.data.begin() + r * per, t.data.begin() + (r + 1) * per);
  return out;
}

// What the golden subset keeps of a tap: nothing, all of it, or its prefill rows at golden_rows().
enum class SubsetPart { None, Whole, Rows };

SubsetPart subset_part(const std::string& name, int decode_steps) {
  const std::string phase = tap_phase(name);
  if (whole_sequence_tap(name)) {  // states grow by a token a step: the prefill's and the last step's suffice
    const bool keep = phase == "prefill" || (decode_steps > 0 && phase == decode_phase(decode_steps - 1)) ||
                      tap_kind(name) == "final/logits";
    return keep ? SubsetPart::Whole : SubsetPart::None;
  }
  if (phase == "prefill") return SubsetPart::Rows;
  return is_decode(phase) ? SubsetPart::Whole : SubsetPart::None;
}

std::string join_ints(const std::vector<int64_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }

std::vector<int64_t> parse_ints(const std::string& s, const std::string& path, const char* attr) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    // Decimal digits with an optional '-' only: stoll would also take spaces and a '+'.
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size())
      fail("{}: file attribute '{}' is '{}', expected comma-separated integers", path, attr, excerpt(s));
    out.push_back(v);
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

std::string manifest_json(const TapShapes& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, shape] : m) j[name] = shape;
  return j.dump();
}

TapShapes parse_manifest(const std::string& text, const std::string& path) {
  const std::string where = path + ": file attribute 'golden_taps'";
  const json j = parse_json_text(text, where);
  if (!j.is_object())
    fail("{} is {}, expected a JSON object {{\"<tap name>\": [shape], ...}}", where, json_type_name(j));
  TapShapes m;
  for (const auto& [name, shape] : j.items()) {
    if (!shape.is_array())
      fail("{}: tap '{}' has {}, expected a shape (an array of integers)", where, excerpt(name), json_type_name(shape));
    std::vector<int64_t>& dims = m[name];
    for (const json& d : shape) {
      // Past INT64_MAX the parser holds an integer unsigned, and get<int64_t>() would wrap it.
      if (!d.is_number_integer() || (d.is_number_unsigned() && d.get<uint64_t>() > uint64_t(INT64_MAX)) ||
          d.get<int64_t>() < 0)
        fail("{}: tap '{}' has shape {}, expected non-negative integers", where, excerpt(name), excerpt(shape));
      dims.push_back(d.get<int64_t>());
    }
  }
  if (m.empty()) fail("{} lists no taps", where);
  return m;
}

// "a, b, c and 4 more": the first few names of a long list.
std::string some_names(const std::vector<std::string>& names, size_t shown = 6) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > shown) out += fmt::format(" and {} more", names.size() - shown);
  return out;
}

// The lines of one tap-set difference, each starting with `what`.
std::string diff_lines(const TapSetDiff& d, const std::string& lacks, const std::string& adds) {
  std::string out;
  if (!d.missing.empty()) out += fmt::format("  {} {} tap(s): {}\n", lacks, d.missing.size(), some_names(d.missing));
  if (!d.extra.empty()) out += fmt::format("  {} {} tap(s): {}\n", adds, d.extra.size(), some_names(d.extra));
  if (!d.reshaped.empty())
    out += fmt::format("  {} tap(s) of another shape: {}\n", d.reshaped.size(), some_names(d.reshaped, 3));
  return out;
}

}  // namespace

std::vector<int64_t> golden_rows(const Scenario& s) {
  const int64_t n = int64_t(s.prompt.size());
  const int64_t piece = s.prefill_chunk > 0 ? s.prefill_chunk : n;
  const int64_t first_choice = int64_t(s.cfg.sparse.k_sel()) * s.cfg.sparse.block_size;  // qb >= K_sel
  std::set<int64_t> rows =
      {0,    int64_t(s.cfg.sparse.block_size), first_choice, s.cfg.sparse.dense_len - 1, s.cfg.sparse.dense_len, n - 2,
       n - 1};
  for (int64_t b = piece; b < n; b += piece) rows.insert({b - 1, b});
  std::vector<int64_t> out;
  for (int64_t r : rows)
    if (r >= 0 && r < n) out.push_back(r);
  return out;
}

TapMap golden_subset(const TapMap& taps, const std::vector<int64_t>& rows, int decode_steps) {
  TapMap out;
  for (const auto& [name, t] : taps) {
    const SubsetPart part = subset_part(name, decode_steps);
    if (part == SubsetPart::Whole) out[name] = t;
    if (part == SubsetPart::Rows) out[name] = cut_rows(t, rows, name);
  }
  return out;
}

TapHeaders golden_subset_headers(const TapHeaders& run, const std::vector<int64_t>& rows, int decode_steps) {
  TapHeaders out;
  for (const auto& [name, h] : run) {
    const SubsetPart part = subset_part(name, decode_steps);
    if (part == SubsetPart::None) continue;
    TapHeader& o = out[name] = h;
    if (part == SubsetPart::Rows) {
      check_rows(h.shape.at(0), rows, name);
      o.shape[0] = int64_t(rows.size());
    }
  }
  return out;
}

TapShapes tap_shapes(const TapMap& taps) {
  TapShapes out;
  for (const auto& [name, t] : taps) out[name] = t.shape;
  return out;
}

TapSetDiff diff_tap_sets(const TapShapes& want, const TapShapes& have) {
  TapSetDiff d;
  for (const auto& [name, shape] : want) {
    auto it = have.find(name);
    if (it == have.end()) d.missing.push_back(name);
    else if (it->second != shape)
      d.reshaped.push_back(
          fmt::format("{}: [{}], expected [{}]", name, fmt::join(it->second, ","), fmt::join(shape, ",")));
  }
  for (const auto& [name, shape] : have)
    if (!want.count(name)) d.extra.push_back(name);
  return d;
}

void write_golden(const std::string& path, const Golden& g, bool replace) {
  DumpInfo info;
  info.scenario = g.meta.scenario;
  info.git_revision = g.meta.git_revision;
  info.backend = g.meta.backend;
  info.created = g.meta.created;
  info.extra = {{"golden_format", kGoldenFormat},
                {"golden_device", g.meta.device},
                {"golden_gpu_source_hash", g.meta.gpu_hash},
                {"golden_gpu_source_files", fmt::format("{}", fmt::join(g.meta.gpu_files, ","))},
                {"golden_scenario_path", g.meta.scenario_path},
                {"golden_prefill_rows", join_ints(g.meta.rows)},
                {"golden_taps", manifest_json(g.meta.manifest)},
                {"golden_manifest_source", g.meta.manifest_source}};
  write_taps(path, g.taps, info, FloatStorage::Float32, /*compress=*/true, replace);
}

Golden read_golden(const std::string& path) {
  TapDump d = read_taps(path);
  auto attr = [&](const char* k) -> const std::string& {
    auto it = d.info.extra.find(k);
    if (it == d.info.extra.end())
      fail("{}: file attribute '{}' is missing: a tap dump, but not a golden (salasim golden record writes them)", path,
           k);
    return it->second;
  };
  if (attr("golden_format") != kGoldenFormat)
    fail(
        "{}: file attribute 'golden_format' is '{}', this build reads format {} (format 2 added the tap manifest "
        "golden_taps): re-record the golden on a GPU machine with this build",
        path, excerpt(attr("golden_format")), kGoldenFormat);
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
  g.meta.manifest = parse_manifest(attr("golden_taps"), path);
  g.meta.manifest_source = attr("golden_manifest_source");
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
  g.meta.manifest = tap_shapes(g.taps);
  g.meta.manifest_source =
      "recorded: the tap set of this golden's GPU run, written with its taps by salasim golden record";
  return g;
}

std::string rerecord_command(const std::string& scenario_path, const std::string& golden_path) {
  return fmt::format("build/salasim golden record --scenario {} --out {} --force", scenario_path, golden_path);
}

GoldenTruth golden_truth(const Truth& truth, const Scenario& s) {
  const std::vector<int64_t> rows = golden_rows(s);
  GoldenTruth t;
  t.ref = golden_subset(truth.ref, rows, s.decode_steps);
  t.peer = golden_subset(truth.peer, rows, s.decode_steps);
  t.ref_made = tap_headers(t.ref);
  t.peer_made = tap_headers(t.peer);
  return t;
}

GoldenTruth golden_truth(const StreamResult& streamed, const Scenario& s) {
  const std::vector<int64_t> rows = golden_rows(s);
  GoldenTruth t;
  t.ref_made = golden_subset_headers(streamed.ref_seen, rows, s.decode_steps);
  t.peer_made = golden_subset_headers(streamed.peer_seen, rows, s.decode_steps);
  // Kept taps outside the subset (a golden's decode-step state that only the last step keeps) are not the subset's.
  for (const auto& [name, tap] : streamed.ref_kept)
    if (t.ref_made.count(name)) t.ref.emplace(name, tap);
  for (const auto& [name, tap] : streamed.peer_kept)
    if (t.peer_made.count(name)) t.peer.emplace(name, tap);
  return t;
}

KeepTaps golden_keep(const Golden& g, const Scenario& s) {
  KeepTaps k;
  for (const auto& [name, t] : g.taps) {
    k.names.insert(name);
    if (tap_kind(name) == "sparse/select/blocks") k.names.insert(name.substr(0, name.rfind('/') + 1) + "scores");
  }
  k.rows = golden_rows(s);
  k.what = "golden";
  return k;
}

GoldenCheck check_golden(const Golden& g, const Scenario& s, const Truth& truth, const SourceHash& current,
                         const std::string& golden_path) {
  return check_golden(g, s, golden_truth(truth, s), current, golden_path);
}

GoldenCheck check_golden(const Golden& g, const Scenario& s, const GoldenTruth& truth, const SourceHash& current,
                         const std::string& golden_path) {
  GoldenCheck c;
  c.scenario = s.name;
  c.scenario_ok = g.meta.scenario == s.name;
  c.rows = golden_rows(s);
  c.rows_ok = g.meta.rows == c.rows;
  // What the golden must hold is the golden subset of the reference's run now; the golden is gated against that, so
  // a tap it lacks or adds is a failing row, whatever its manifest says.
  c.expected_taps = int64_t(truth.ref_made.size());
  TapShapes made;
  for (const auto& [name, h] : truth.ref_made) made[name] = h.shape;
  c.stored = diff_tap_sets(g.meta.manifest, tap_shapes(g.taps));
  c.made = diff_tap_sets(made, g.meta.manifest);
  // Taps the reference does not record are named by the tap-set lines; gating them would need tolerance rows
  // they may not have.
  TapMap held;
  for (const auto& [name, t] : g.taps)
    if (truth.ref_made.count(name)) {
      if (!truth.ref.count(name)) fail("internal: golden check: the truth run kept no data of tap {}", name);
      held.emplace(name, t);
    }
  c.report = compare_taps(truth.ref, &truth.peer, held);
  // The subset's taps the truth holds no data of (a streaming run keeps the golden's only): the golden lacks them,
  // so each gets the row compare_taps gives a tap the backend lacks.
  for (const auto& [name, h] : truth.ref_made) {
    if (truth.ref.count(name)) continue;
    TapFacts f;
    f.in_reference = true;
    f.in_peer = truth.peer_made.count(name) > 0;
    f.order = h.order;
    add_row(c.report, judge_tap(name, tolerance_row(tolerance_table(), tap_kind(name)), true, f));
  }
  finish_report(c.report);
  c.recorded_hash = g.meta.gpu_hash;
  c.current_hash = current.hex;
  if (!c.hash_ok()) c.changed_inputs = changed_inputs(g.meta.gpu_files, current.files);
  c.rerecord = rerecord_command(g.meta.scenario_path, golden_path);
  return c;
}

std::string format_golden_check(const GoldenCheck& c, const Golden& g, const std::string& golden_path, bool all_rows) {
  const GoldenMeta& m = g.meta;
  const std::string by = backend_label(m.backend, m.device);
  std::string out =
      fmt::format("golden {}: {} taps recorded by {} ({}, git {}), scenario {} ({}), prefill rows {}\n", golden_path,
                  g.taps.size(), by, m.created, m.git_revision.empty() ? "?" : m.git_revision, m.scenario,
                  m.scenario_path, fmt::join(m.rows, ","));
  if (!c.scenario_ok)
    out += fmt::format("scenario: FAIL: the golden was recorded on scenario '{}', checked against '{}'\n", m.scenario,
                       c.scenario);
  if (!c.rows_ok)
    out += fmt::format("prefill rows: FAIL: the golden holds rows {}, scenario {} gives rows {} now\n",
                       fmt::join(m.rows, ","), c.scenario, fmt::join(c.rows, ","));
  if (c.stored.ok() && c.made.ok()) {
    out += fmt::format(
        "tap set: {} taps, names and shapes as the reference records them on {} now; the file holds "
        "exactly its manifest ({})\n",
        m.manifest.size(), c.scenario, m.manifest_source);
  } else {
    out += fmt::format(
        "tap set: FAIL: the reference records {} taps for this golden on {} now, its manifest lists {}, "
        "the file holds {} (manifest: {})\n",
        c.expected_taps, c.scenario, m.manifest.size(), g.taps.size(), m.manifest_source);
    out += diff_lines(c.made, "the manifest lacks", "the manifest has, and the reference does not record,");
    out += diff_lines(c.stored, "the file lacks, of its own manifest,", "the file has, outside its manifest,");
  }
  out += fmt::format("GPU sources ({}): recorded {}, now {}: {}\n", gpu_sources_label(), c.recorded_hash,
                     c.current_hash, c.hash_ok() ? "match" : "DIFFER (changed since the golden was recorded)");
  if (!c.hash_ok() && !c.changed_inputs.empty())
    out += fmt::format("  changed: {}\n", fmt::join(c.changed_inputs, ", "));
  out += format_report(c.report, PrintOptions{!all_rows});
  if (c.pass()) {
    out += "golden check: PASS\n";
  } else {
    std::vector<std::string> what;
    if (!c.scenario_ok) what.push_back(fmt::format("recorded on scenario '{}', not '{}'", m.scenario, c.scenario));
    if (!c.rows_ok) what.push_back("other prefill rows");
    if (!c.stored.ok() || !c.made.ok()) what.push_back("the tap set differs from the reference's");
    if (!c.report.pass()) what.push_back(fmt::format("{} tap(s) fail", c.report.failed));
    if (!c.hash_ok()) what.push_back("the GPU sources changed");
    out += fmt::format("golden check: FAIL ({}).\n", fmt::join(what, "; "));
    out += fmt::format("If the change is intended, verify it on a GPU and re-record the golden there:\n  {}\n",
                       c.rerecord);
  }
  return out;
}

}  // namespace salasim
