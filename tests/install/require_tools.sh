# rocke tests — sourced by the install tests: require_tools WHAT TOOL... exits
# 77 (ctest's skip) naming the first missing tool. Layer: tests.
require_tools() {
  what=$1
  shift
  for tool in "$@"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "SKIP: $tool is not installed; the $what test needs $*"
      exit 77
    fi
  done
}
