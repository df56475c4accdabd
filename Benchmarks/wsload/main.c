/*
 * wsload's entry point: `wsload durable ...` and `wsload fanout ...` load the chat protocol on /ws
 * (chat.c), `wsload --selftest` runs the built-in checks, anything else is the room relay
 * (relay.c). See README.md.
 */
#include "wsload.h"

int main(int argc, char **argv) {
    if (argc >= 2 && (!strcmp(argv[1], "durable") || !strcmp(argv[1], "fanout"))) return chat_main(argc, argv);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--selftest")) {
            g_base = mono_abs();
            chat_init();
            for (int j = 1; j < argc; j++) G.verbose |= !strcmp(argv[j], "-v") || !strcmp(argv[j], "--verbose");
            return selftest();
        }
    return relay_main(argc, argv);
}
