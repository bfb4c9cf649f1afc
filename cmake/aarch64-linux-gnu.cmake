# Cross build for 64-bit ARM Linux with Debian's gcc-aarch64-linux-gnu
# (and libc6-dev-arm64-cross); tests run under qemu-user (package
# qemu-user: qemu-aarch64) through CMAKE_CROSSCOMPILING_EMULATOR.
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# Optional pkg-config dependencies (json-c, PCRE2) are looked for in the
# arm64 sysroot only, so the host's x86 libraries are never picked up.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(NEXTOK_CROSS_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${NEXTOK_CROSS_TRIPLE}-gcc)
set(CMAKE_FIND_ROOT_PATH /usr/${NEXTOK_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/${NEXTOK_CROSS_TRIPLE}/pkgconfig:/usr/${NEXTOK_CROSS_TRIPLE}/lib/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

find_program(NEXTOK_QEMU_AARCH64 qemu-aarch64)
if(NEXTOK_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${NEXTOK_QEMU_AARCH64} -L /usr/${NEXTOK_CROSS_TRIPLE})
endif()
