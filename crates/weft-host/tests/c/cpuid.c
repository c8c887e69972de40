/* What `cpuid` says of the processor's random-number instructions (leaf 1 RDRAND, leaf 7
 * RDSEED), in the main thread and in a new one, and its vendor string. */
#include <cpuid.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void *features(void *who) {
    unsigned a, b, c, d;
    __cpuid_count(1, 0, a, b, c, d);
    int rdrand = (c >> 30) & 1;
    __cpuid_count(7, 0, a, b, c, d);
    printf("%s: rdrand %d rdseed %d\n", (const char *)who, rdrand, (b >> 18) & 1);
    return NULL;
}

int main(void) {
    unsigned a, b, c, d;
    char vendor[13] = "";
    __cpuid(0, a, b, c, d);
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    printf("vendor %s, %u leaves\n", vendor, a);
    features("main");
    pthread_t t;
    pthread_create(&t, NULL, features, "thread");
    pthread_join(t, NULL);
    return 0;
}
