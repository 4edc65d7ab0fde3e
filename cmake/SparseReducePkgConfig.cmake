# sparse_reduce.pc for consumers without CMake:
#   g++ -std=c++20 app.cpp $(pkg-config --cflags --libs sparse_reduce)
# Written at install time, so that `cmake --install --prefix P` puts P in it
# (a path relative to ${pcfiledir} would put -I/usr/share/pkgconfig/../../include
# on system installs, which breaks the #include_next of libstdc++). Installed
# to share/pkgconfig: the library is header-only, its .pc holds no
# architecture-specific path.
include_guard(GLOBAL)

# Boost's include and library directories, where the compiler would not
# search them by itself (a Boost built by hand).
set(_sr_pc_boost_cflags "")
set(_sr_pc_boost_libdir "")
get_target_property(_sr_boost_include Boost::headers INTERFACE_INCLUDE_DIRECTORIES)
foreach(_dir IN LISTS _sr_boost_include)
    if(NOT _dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
        string(APPEND _sr_pc_boost_cflags " -I${_dir}")
    endif()
endforeach()
get_target_property(_sr_boost_mpi Boost::mpi LOCATION)
if(_sr_boost_mpi)
    get_filename_component(_sr_boost_libdir "${_sr_boost_mpi}" DIRECTORY)
    if(NOT _sr_boost_libdir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
        set(_sr_pc_boost_libdir " -L${_sr_boost_libdir}")
    endif()
endif()

# A .pc in two stages: at configure time everything but the prefix, which
# stays a placeholder; at install time the prefix the install goes to.
function(_sr_install_pc name destination)
    configure_file("${PROJECT_SOURCE_DIR}/cmake/${name}.pc.in" "${PROJECT_BINARY_DIR}/${name}.pc.stage" @ONLY)
    install(CODE "
        set(SPARSE_REDUCE_PC_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
        configure_file(\"${PROJECT_BINARY_DIR}/${name}.pc.stage\"
            \"${PROJECT_BINARY_DIR}/${name}.pc\" @ONLY)
        " COMPONENT library)
    install(FILES "${PROJECT_BINARY_DIR}/${name}.pc" DESTINATION "${destination}" COMPONENT library)
endfunction()

# An install directory as a .pc writes it: relative ones under ${prefix}.
function(_sr_pc_dir out dir)
    if(IS_ABSOLUTE "${dir}")
        set(${out} "${dir}" PARENT_SCOPE)
    else()
        set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
    endif()
endfunction()

set(SPARSE_REDUCE_PC_PREFIX "@SPARSE_REDUCE_PC_PREFIX@")
_sr_pc_dir(SPARSE_REDUCE_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
set(SPARSE_REDUCE_PC_BOOST_CFLAGS "${_sr_pc_boost_cflags}")
set(SPARSE_REDUCE_PC_BOOST_LIBDIR "${_sr_pc_boost_libdir}")
_sr_install_pc(sparse_reduce "${CMAKE_INSTALL_DATADIR}/pkgconfig")

# sparse_reduce_compiled.pc, the compiled mode's: an architecture's library,
# so in lib/pkgconfig.
if(SPARSE_REDUCE_COMPILED_MODE)
    _sr_pc_dir(SPARSE_REDUCE_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
    _sr_install_pc(sparse_reduce_compiled "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
endif()
