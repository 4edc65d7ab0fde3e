# Helpers to register SparseReduce's Boost.Test executables with CTest.
#
#   sparse_reduce_add_unit_test(NAME <name> SOURCES <src...>
#                               [SUITES <suite...>] [TIMEOUT <seconds>])
#   sparse_reduce_add_mpi_test(NAME <name> SOURCES <src...> NPROCS <n...>
#                              [TIMEOUT <seconds>] [LIBRARIES <libs...>] [COMPILED])
#
# COMPILED: linked with SparseReduce::compiled (the compiled mode) and built
# without the precompiled header, which is header-only use's.
#
# Both expect Boost::unit_test_framework (find_package(Boost ... COMPONENTS
# unit_test_framework)), MPI (MPIEXEC_* variables from FindMPI), the target
# SparseReduce::sparse_reduce and the helper target
# sparse_reduce_warnings_and_sanitizers to exist when they are called.

include_guard(DIRECTORY) # variables are per directory: test/ and benchmark/ both include it

# ---------------------------------------------------------------------------
# Is the MPI launcher Open MPI? Probed once per MPIEXEC_EXECUTABLE and cached.
# Open MPI refuses to start more ranks than cores without --oversubscribe.
# ---------------------------------------------------------------------------
if(NOT MPIEXEC_EXECUTABLE)
    message(FATAL_ERROR "SparseReduceTesting: MPIEXEC_EXECUTABLE is not set; call find_package(MPI) first")
endif()

if(NOT DEFINED CACHE{SPARSE_REDUCE_MPIEXEC_IS_OPENMPI}
   OR NOT "$CACHE{_SPARSE_REDUCE_MPIEXEC_PROBED}" STREQUAL "${MPIEXEC_EXECUTABLE}")
    execute_process(
        COMMAND "${MPIEXEC_EXECUTABLE}" --version
        OUTPUT_VARIABLE _sr_mpiexec_out
        ERROR_VARIABLE _sr_mpiexec_err
        RESULT_VARIABLE _sr_mpiexec_rc
        TIMEOUT 60)
    if("${_sr_mpiexec_out}${_sr_mpiexec_err}" MATCHES "Open MPI|OpenRTE")
        set(_sr_is_openmpi TRUE)
    else()
        set(_sr_is_openmpi FALSE)
    endif()
    set(SPARSE_REDUCE_MPIEXEC_IS_OPENMPI ${_sr_is_openmpi} CACHE INTERNAL
        "Whether MPIEXEC_EXECUTABLE is Open MPI's launcher")
    set(_SPARSE_REDUCE_MPIEXEC_PROBED "${MPIEXEC_EXECUTABLE}" CACHE INTERNAL
        "MPIEXEC_EXECUTABLE that SPARSE_REDUCE_MPIEXEC_IS_OPENMPI was probed for")
    message(STATUS "SparseReduce: ${MPIEXEC_EXECUTABLE} is Open MPI: ${_sr_is_openmpi}")
    unset(_sr_mpiexec_out)
    unset(_sr_mpiexec_err)
    unset(_sr_mpiexec_rc)
    unset(_sr_is_openmpi)
endif()

if(SPARSE_REDUCE_MPIEXEC_IS_OPENMPI)
    set(SPARSE_REDUCE_MPIEXEC_OVERSUBSCRIBE_FLAG --oversubscribe)
else()
    set(SPARSE_REDUCE_MPIEXEC_OVERSUBSCRIBE_FLAG)
endif()

# CTest captures test output, so Boost.Test's ANSI colours only clutter logs.
set(SPARSE_REDUCE_UNIT_TEST_ENVIRONMENT "BOOST_TEST_COLOR_OUTPUT=no")

# Environment for every MPI test: lets Open MPI run as root (CI and containers)
# and oversubscribe even if the caller exported nothing. Other MPIs ignore it.
set(SPARSE_REDUCE_MPI_TEST_ENVIRONMENT
    "BOOST_TEST_COLOR_OUTPUT=no"
    "OMPI_ALLOW_RUN_AS_ROOT=1"
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
    "OMPI_MCA_rmaps_base_oversubscribe=1")

# Shared compile/link setup of a Boost.Test executable; _SR_COMPILED set:
# in the compiled mode.
function(_sparse_reduce_test_executable name)
    add_executable(${name} ${ARGN})
    target_link_libraries(${name} PRIVATE
        SparseReduce::sparse_reduce
        Boost::unit_test_framework
        sparse_reduce_warnings_and_sanitizers)
    target_compile_definitions(${name} PRIVATE BOOST_TEST_DYN_LINK)
    # Tests check results, not speed: -Og instead of Release's -O3 builds
    # them in 40 % of the time (60 % of -O1's), and runs them about 1.15x
    # slower than -O1 does. The code as users optimise it is
    # checked too: the compiled mode's library (-O3) under compiled_mode, and
    # the benchmarks' smoke runs, which compare every result with MPI's.
    # (SPARSE_REDUCE_TEST_RELEASE_OPTIMIZATION, CMakeLists.txt).
    target_compile_options(${name} PRIVATE ${_sparse_reduce_test_optimization})
    if(_SR_COMPILED)
        target_link_libraries(${name} PRIVATE SparseReduce::compiled)
    else()
        sparse_reduce_use_pch(TESTS ${name}) # the precompiled umbrella header (CMakeLists.txt)
    endif()
endfunction()

# ---------------------------------------------------------------------------
# sparse_reduce_add_unit_test
# ---------------------------------------------------------------------------
function(sparse_reduce_add_unit_test)
    cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME;TIMEOUT" "SOURCES;SUITES")
    if(ARG_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "sparse_reduce_add_unit_test: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
    endif()
    if(NOT ARG_NAME OR NOT ARG_SOURCES)
        message(FATAL_ERROR "sparse_reduce_add_unit_test: NAME and SOURCES are required")
    endif()
    if(NOT ARG_TIMEOUT)
        set(ARG_TIMEOUT 300)
    endif()

    _sparse_reduce_test_executable(${ARG_NAME} ${ARG_SOURCES})

    set(test_names)
    if(ARG_SUITES)
        # One CTest entry per top-level suite. A suite name that the executable
        # does not contain makes Boost.Test fail ("no test cases matching
        # filter"), so a renamed or dropped suite is noticed.
        foreach(suite IN LISTS ARG_SUITES)
            add_test(NAME ${ARG_NAME}.${suite} COMMAND ${ARG_NAME} --run_test=${suite})
            list(APPEND test_names ${ARG_NAME}.${suite})
        endforeach()
    else()
        add_test(NAME ${ARG_NAME} COMMAND ${ARG_NAME})
        list(APPEND test_names ${ARG_NAME})
    endif()
    set_tests_properties(${test_names} PROPERTIES
        LABELS unit
        TIMEOUT ${ARG_TIMEOUT}
        ENVIRONMENT "${SPARSE_REDUCE_UNIT_TEST_ENVIRONMENT}")
endfunction()

# ---------------------------------------------------------------------------
# sparse_reduce_add_mpi_test
#
# Builds ONE executable and registers <name>.np<N> for every N in NPROCS.
#
# Scheduling: each entry gets PROCESSORS <N> (not RUN_SERIAL). CTest never lets
# the PROCESSORS of concurrently running tests exceed its -j level, and a test
# asking for more than -j is treated as needing all of it, i.e. it runs alone.
# With `ctest -j2` on the 2-core machine this means: np1 may run next to one
# other single-process test, np2..np8 run alone, and oversubscribed runs never
# pile up (at -j4 an np3 run beside a single-process test took 25 s instead
# of 4: its ranks yield to each other and lose the core). Unlike RUN_SERIAL
# this still lets a larger -j on a bigger machine run several MPI tests side
# by side.
# ---------------------------------------------------------------------------
function(sparse_reduce_add_mpi_test)
    cmake_parse_arguments(PARSE_ARGV 0 ARG "COMPILED" "NAME;TIMEOUT" "SOURCES;NPROCS;LIBRARIES")
    if(ARG_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "sparse_reduce_add_mpi_test: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
    endif()
    if(NOT ARG_NAME OR NOT ARG_SOURCES OR NOT ARG_NPROCS)
        message(FATAL_ERROR "sparse_reduce_add_mpi_test: NAME, SOURCES and NPROCS are required")
    endif()
    if(NOT ARG_TIMEOUT)
        set(ARG_TIMEOUT 120)
    endif()

    set(_SR_COMPILED ${ARG_COMPILED})
    _sparse_reduce_test_executable(${ARG_NAME} ${ARG_SOURCES})
    if(ARG_LIBRARIES)
        target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBRARIES})
    endif()

    foreach(np IN LISTS ARG_NPROCS)
        if(NOT np MATCHES "^[1-9][0-9]*$")
            message(FATAL_ERROR "sparse_reduce_add_mpi_test(${ARG_NAME}): NPROCS entry '${np}' is not a positive integer")
        endif()
        set(test_name ${ARG_NAME}.np${np})
        add_test(NAME ${test_name}
            COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                    ${SPARSE_REDUCE_MPIEXEC_OVERSUBSCRIBE_FLAG}
                    ${MPIEXEC_PREFLAGS}
                    $<TARGET_FILE:${ARG_NAME}>
                    ${MPIEXEC_POSTFLAGS})
        set_tests_properties(${test_name} PROPERTIES
            LABELS mpi
            TIMEOUT ${ARG_TIMEOUT}
            PROCESSORS ${np}
            ENVIRONMENT "${SPARSE_REDUCE_MPI_TEST_ENVIRONMENT}")
    endforeach()
endfunction()
