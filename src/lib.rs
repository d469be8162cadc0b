//! Energy suites package: see the README.
