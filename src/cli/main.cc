// noisefloor: a thin main over the library. Parses the command line and dispatches.
#include <cstdio>

int main() {
  std::puts("noisefloor");
  return 0;
}
