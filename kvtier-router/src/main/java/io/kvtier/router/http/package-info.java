/** What the router's and the engine emulator's HTTP fronts share: OpenAI-shaped answers on the JDK's HTTP server. */
package io.kvtier.router.http;
