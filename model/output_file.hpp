// Writing an output so that nothing is lost (docs/input-limits.md, "Outputs"): the bytes go to a temporary file
// beside the target, every write, flush, sync and close is checked, and only a complete file is renamed onto the
// target's name. An interrupted or failed write leaves no file under that name and the old one, if any, intact.
#pragma once
#include <string>

namespace salasim {

// Writes `bytes` to `path` as above. replace = false: an existing `path` is refused (salasim::Error naming it and
// the --force that would replace it); true: it is replaced in one rename. A failed write (a full disk, a folder that
// is not writable) is a salasim::Error naming the file and the reason, and the temporary file is removed.
void write_file_atomic(const std::string& path, const std::string& bytes, bool replace);
inline void write_text_atomic(const std::string& path, const std::string& text) { write_file_atomic(path, text, true); }

// The temporary name write_file_atomic uses for `path`: "<dir>/.<name>.tmp-<pid>", hidden, in the same folder (so
// the rename stays on one file system).
std::string temporary_name(const std::string& path);

}  // namespace salasim
