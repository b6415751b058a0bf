// Warnings raised from C++ (torch's TORCH_WARN): delivered to the handler the Python module
// installs, which turns them into Python UserWarnings (and raises when the warnings filter makes
// them errors); without a handler they are written to stderr.
#pragma once
#include <string>

namespace fl {
using WarningHandler = void (*)(const std::string& message);
void set_warning_handler(WarningHandler handler);
void warn(const std::string& message);
}  // namespace fl
