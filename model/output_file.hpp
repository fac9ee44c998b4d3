// The output policy of every command that writes (docs/input-limits.md, "Outputs"): nothing is lost and nothing
// half-written is left under a final name.
//   - A file is written to a temporary name beside its target (".<name>.tmp-<pid>", hidden, same folder, so the
//     rename stays on one file system) and renamed onto the target only once complete and synced.
//   - An existing target is refused (salasim::Error: exit 2, naming it and the option) unless the command was given
//     --force; with it, the old file is replaced in one rename, so it survives any failure before that.
//   - Every write, flush, sync, close and rename is checked; a failure is a salasim::Error naming the file and the
//     reason, and the temporary is removed.
//   - SIGINT, SIGTERM and SIGHUP remove the temporaries (files and folders) of outputs still being written, then end
//     the process as the signal would (install_output_cleanup, called by main). A SIGKILL cannot be caught: it leaves a
//     hidden temporary, never a file under the final name, and the next write of the same target removes temporaries
//     whose process is gone.
//   - A folder of outputs (the report bundle, a checkpoint, a RULER report) is built in a temporary folder beside
//     its target and renamed into place whole.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace salasim {

// Writes `bytes` to `path` under the policy above. force = false: an existing `path` is refused; true: replaced.
// `option` names what chose the path in messages ("--out", "--json-out").
void write_file_atomic(const std::string& path, const std::string& bytes, bool force, const std::string& option = "");
// The manifest-style rewrite of a file the command owns (e.g. gpu/golden_inputs.txt): force = true.
inline void write_text_atomic(const std::string& path, const std::string& text) { write_file_atomic(path, text, true); }

// The temporary name used for `path`: "<dir>/.<name>.tmp-<pid>".
std::string temporary_name(const std::string& path);

// Checks, before any long work, that `path` can be written under the policy: refused when it exists and !force, or
// when it exists and is not a regular file (a folder, a FIFO, /dev/full); its folder must exist (the commands
// create it first where that is wanted) and accept a new file (a probe file is created and removed). A
// salasim::Error names `option` and the reason.
void check_output_file(const std::string& path, bool force, const std::string& option);
// The same for a folder of outputs: an existing `path` is refused unless force (then it must be a folder, which is
// replaced whole at commit); its parent is created when missing and must accept a new folder.
void check_output_folder(const std::string& path, bool force, const std::string& option);

// A file being written: construct (the checks of check_output_file), write to temp(), then commit(). Until commit
// the temporary is registered for removal on SIGINT/SIGTERM/SIGHUP and removed by the destructor, so a failure or
// an exception leaves nothing behind. commit() syncs the temporary and renames it onto the target (refusing, when
// !force, a target that appeared meanwhile).
class OutputFile {
 public:
  OutputFile(std::string path, bool force, std::string option);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  const std::string& path() const { return path_; }
  const std::string& temp() const { return temp_; }
  void commit();

 private:
  std::string path_, temp_, option_;
  bool force_ = false, done_ = false;
  int slot_ = -1;  // its place in the signal handler's list
};

// A folder being written: construct (the checks of check_output_folder), write under temp() (created empty), then
// commit(): with force an existing folder is moved aside, the new one renamed into place, the old one deleted. The
// destructor deletes an uncommitted temporary folder.
class OutputFolder {
 public:
  OutputFolder(std::string path, bool force, std::string option);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;
  const std::string& path() const { return path_; }
  const std::string& temp() const { return temp_; }
  void commit();

 private:
  void replace_by_two_renames(const std::string& what);  // where RENAME_EXCHANGE is not supported
  std::string path_, temp_, option_;
  bool force_ = false, done_ = false;
  int slot_ = -1;  // its place in the signal handler's list
};

// A command's inputs as (path, what) pairs: {"scen.json", "--scenario"}. Paths that do not exist are skipped.
using NamedInputs = std::vector<std::pair<std::string, std::string>>;

// Refuses (an Error: exit 2), even with --force, a file output `out` that is one of `inputs`: the same path once
// normalized, or the same device and inode (a symlink or a hard link to it). salasim never writes over its inputs
// (`op --in x.h5 --out x.h5 --force` replaced its input with its output; `ref --dump-taps` its scenario).
void refuse_output_over_inputs(const std::string& out, const std::string& option, const NamedInputs& inputs);
// Every file this process reads is noted as an input (require_regular_file, model/json_field.hpp, calls this for
// every reader: JSON, text, safetensors, tokenizer, HDF5), and no output may replace one, even with --force: a file
// output that is an input (its device and inode), or a folder output holding one, is refused naming both, when the
// output is checked and again just before its rename. (`op --in x.h5 --out x.h5 --force` replaced its input;
// `ref --dump-taps SCENARIO --force` its scenario; `report --out DIR --force` deleted the --hw profile in DIR.)
void note_input(const std::string& path);
// The guard above is for a command, one process that reads its inputs and writes its outputs: main turns it on. A
// long-lived user of the library (a test or fuzz binary rewriting a file it read a moment ago) leaves it off, and
// then nothing is noted or refused.
void guard_inputs(bool on);

// A scratch folder beside `for_path` (".<name>.work.tmp-<pid>"), for a tool that writes files of its own choosing
// (SentencePiece's trainer writes <prefix>.model and <prefix>.vocab): registered for removal on a signal like an
// output's temporary, and removed with everything in it by the destructor.
class ScratchFolder {
 public:
  explicit ScratchFolder(const std::string& for_path);
  ~ScratchFolder();
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int slot_ = -1;
};

// Installs the handler that removes the registered temporaries and re-raises the signal with its default action (so
// the exit status still says which signal ended the process) for every catchable signal whose default ends the
// process: SIGINT, SIGTERM, SIGHUP, and also SIGPIPE (`salasim report | head`), SIGQUIT, SIGALRM, SIGUSR1/2,
// SIGXCPU (`ulimit -t`), SIGVTALRM and SIGPROF, each of which left a temporary behind. A signal the process
// inherited as ignored (nohup's SIGHUP) stays ignored. SIGXFSZ is ignored: past `ulimit -f` a write then fails with
// EFBIG and becomes exit 2 naming the file, instead of a kill that left the temporary. Idempotent.
void install_output_cleanup();

// Writes all of `bytes` to `fd`, retrying short writes and EINTR; false (errno set) on failure.
bool write_all(int fd, const char* bytes, size_t n);

}  // namespace salasim
