// libtessera.so is assembled from static archives (whole-archive); CMake needs one source of its own.
namespace tessera::detail { int library_anchor = 0; }
