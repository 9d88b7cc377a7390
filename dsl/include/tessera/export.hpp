#pragma once
// Symbols of libtessera.so are hidden unless marked: the library carries a static LLVM that must
// never clash with another LLVM in the same process.
#if defined(_WIN32)
#define TESSERA_API
#else
#define TESSERA_API __attribute__((visibility("default")))
#endif
