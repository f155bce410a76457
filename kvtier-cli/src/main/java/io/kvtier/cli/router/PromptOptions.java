package io.kvtier.cli.router;

import io.kvtier.router.tokens.ChatTemplate;
import io.kvtier.router.tokens.Tokenizer;
import java.io.IOException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** How the router and the engine emulator turn a prompt into token ids: {@code --tokenizer} and {@code --chat-template}. */
final class PromptOptions {
    @Option(names = "--tokenizer", paramLabel = "PATH",
            description = "The model's tokenizer.json (or a directory holding one, with its tokenizer_config.json and "
                    + "chat template), to turn text prompts and chat messages into the model's token ids; default: one "
                    + "token per UTF-8 byte.")
    Path tokenizer;

    @Option(names = "--chat-template", paramLabel = "FILE",
            description = "The model's chat template (Jinja), as vLLM's --chat-template; default: the tokenizer "
                    + "directory's chat_template.jinja or tokenizer_config.json chat_template, else a fixed "
                    + "<|role|> template.")
    Path chatTemplate;

    Tokenizer tokenizer() throws IOException {
        return tokenizer == null ? Tokenizer.bytes() : Tokenizer.load(tokenizer);
    }

    ChatTemplate chatTemplate() throws IOException {
        ChatTemplate t = ChatTemplate.load(tokenizer, chatTemplate);
        if (t == null) {
            if (tokenizer != null) {
                System.err.println("no chat template beside " + tokenizer + " and no --chat-template: chat messages are"
                        + " rendered with the fixed <|role|> template, so a chat prompt's ids differ from the model's");
            }
            return ChatTemplate.builtin();
        }
        return t;
    }
}
