#pragma once
/// Text that is safe to print and to put in JSON. A file name is bytes, not necessarily UTF-8;
/// nlohmann refuses to dump a string that is not (type_error.316), and a terminal garbles it.

#include <string>
#include <string_view>

namespace amaxcheck {

/// `text` with every byte that is not part of a well-formed UTF-8 sequence written as `\xNN`
/// (valid UTF-8 comes back unchanged).
std::string escape_invalid_utf8(std::string_view text);

/// The byte offset of the first byte of `text` that is not part of a well-formed UTF-8 sequence
/// (the same rule: a surrogate's encoding is ill-formed), or std::string_view::npos when it is
/// all well-formed.
std::size_t invalid_utf8_at(std::string_view text);

}  // namespace amaxcheck
