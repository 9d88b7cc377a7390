// Line info: with CodegenOptions::line_info, every instruction an op lowers to carries the op's
// C++ source line, so that the PTX has .file/.loc directives and a profiler (Nsight Compute) or
// cuda-gdb maps machine code back to the user's kernel source. Only line tables are emitted
// (DebugDirectivesOnly): no types or variables, which the JIT would have to carry for nothing.
#include <filesystem>

#include <llvm/BinaryFormat/Dwarf.h>

#include "jit/lower/lowering.hpp"

namespace tessera::lower {

namespace {

// The first known source location in program order: the kernel's own file and first line.
ir::SourceLoc first_location(const ir::Block& b) {
  for (const auto& op : b.ops) {
    if (op->loc.known()) return op->loc;
    for (const auto& r : op->regions)
      if (auto loc = first_location(*r->block); loc.known()) return loc;
  }
  return {};
}

std::pair<std::string, std::string> split_path(const std::string& path) {
  const std::filesystem::path p(path.empty() ? "<unknown>" : path);
  return {p.filename().string(), p.parent_path().string()};
}

}  // namespace

void KernelLowering::begin_line_info() {
  const ir::SourceLoc first = first_location(m_.entry());
  const auto [name, dir] = split_path(first.file);
  dib_ = std::make_unique<llvm::DIBuilder>(*module_);
  llvm::DIFile* file = dib_->createFile(name, dir);
  dib_->createCompileUnit(llvm::DISourceLanguageName(llvm::dwarf::DW_LANG_C_plus_plus), file, "tessera",
                          /*isOptimized=*/true, "", 0, "", llvm::DICompileUnit::DebugDirectivesOnly);
  auto* type = dib_->createSubroutineType(dib_->getOrCreateTypeArray({}));
  const unsigned line = static_cast<unsigned>(std::max(first.line, 0));
  subprogram_ = dib_->createFunction(file, m_.name, m_.name, file, line, type, line, llvm::DINode::FlagPrototyped,
                                     llvm::DISubprogram::SPFlagDefinition | llvm::DISubprogram::SPFlagOptimized);
  fn_->setSubprogram(subprogram_);
  file_scopes_[first.file] = subprogram_;
  module_->addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
  module_->addModuleFlag(llvm::Module::Warning, "Dwarf Version", 2);
}

llvm::DILocation* KernelLowering::debug_location(const ir::SourceLoc& loc) {
  // Ops from other files (helpers in a header) keep their own file through a lexical block file.
  auto it = file_scopes_.find(loc.file);
  if (it == file_scopes_.end()) {
    const auto [name, dir] = split_path(loc.file);
    it = file_scopes_.emplace(loc.file, dib_->createLexicalBlockFile(subprogram_, dib_->createFile(name, dir))).first;
  }
  return llvm::DILocation::get(ctx_, static_cast<unsigned>(std::max(loc.line, 0)),
                               static_cast<unsigned>(std::max(loc.column, 0)), it->second);
}

}  // namespace tessera::lower
