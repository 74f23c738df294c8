// `vm --man`: the manual page vm(1), built from the same option tables as
// --help (gc/options.h) so that the installed page cannot fall behind the
// binary it describes.
#pragma once

#include <span>
#include <string>

#include "gc/collector.h"
#include "gc/options.h"

namespace vm {

// The page in roff with man(7) macros: the VM's options `vm_options`, then
// one subsection per collector with options of its own, the collectors
// themselves, the exit statuses and where the installed docs are.
std::string manual_page(std::span<const gc::OptionSpec> vm_options,
                        std::span<const gc::CollectorInfo> collectors, const std::string& version);

// `text` as roff input text: backslashes escaped, hyphens in option names
// (words starting with '-') as \- so that they render and copy as minus
// signs, and a leading '.' or '\'' kept from being read as a request.
std::string roff_escape(const std::string& text);

}  // namespace vm
