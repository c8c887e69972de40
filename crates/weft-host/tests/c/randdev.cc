// C++'s std::random_device, on libstdc++'s default source (RDSEED/RDRAND on x86, no call a
// hook sees) and on /dev/urandom: under the shim both come from the seeded stream, so two
// runs of one seed print the same numbers.
#include <cstdio>
#include <random>

int main() {
    std::random_device dflt;
    std::random_device urandom("/dev/urandom");
    unsigned a = dflt(), b = dflt(), c = urandom();
    std::mt19937 gen(dflt());
    std::printf("random_device: %u %u %u, seeded mt19937: %u\n", a, b, c, unsigned(gen()));
    return 0;
}
