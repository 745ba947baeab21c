// Main.java: both dlqspec contracts in Java (DLQConsumer: dlq-consumer, RetryQueue: outcome-queue), speaking protocol v1 (docs/protocol.md) itself, with its own small JSON reader and writer.
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class Main {
    // ---- the lesson's errors ------------------------------------------------------------

    /**
     * An error a world call raised into the solution, as dlqspec's `raise` named it. `base` is
     * the given error it is a subclass of (`extends`: a spec's `permanent: {class: ...}`), or
     * null: Java has no classes made at run time, so "is a PermanentError" is asked by `is`.
     */
    static class WorldError extends RuntimeException {
        final String kind;
        final String className;
        final String base;

        WorldError(String kind, String className, String message, String base) {
            super(message);
            this.kind = kind;
            this.className = className;
            this.base = base;
        }

        /** Whether it is an error of the given class, or of a subclass of it. */
        boolean is(String given) {
            return given.equals(className) || given.equals(base);
        }
    }

    /** A crash injected by dlqspec: the solution must let it propagate. */
    static final class Crash extends WorldError {
        Crash(String className, String message) {
            super("crash", className, message, null);
        }
    }

    /** A broken protocol exchange: the process cannot go on. */
    static final class ProtocolBroken extends RuntimeException {
        ProtocolBroken(String message) {
            super(message);
        }
    }

    /** What the implementation itself cannot do (no such method...): an `errored` reply. */
    static final class CannotServe extends RuntimeException {
        CannotServe(String message) {
            super(message);
        }
    }

    // ---- the protocol -------------------------------------------------------------------

    private final BufferedReader in;
    private final PrintStream out;
    private long seq;
    private long worldCalls;
    private Object instance;

    Main(BufferedReader in, PrintStream out) {
        this.in = in;
        this.out = out;
    }

    public static void main(String[] args) throws IOException {
        // stdout carries the protocol alone: whatever the solution prints goes to stderr.
        PrintStream protocol = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        new Main(in, protocol).serve();
    }

    void serve() throws IOException {
        String line;
        while ((line = in.readLine()) != null) {
            Map<String, Object> request = Json.object(Json.parse(line));
            seq = Json.integer(request.get("seq"));
            String type = (String) request.get("type");
            if ("bye".equals(type)) {
                send(message("bye"));
                return;
            }
            send(answer(type, request));
        }
    }

    private Map<String, Object> answer(String type, Map<String, Object> request) {
        if ("hello".equals(type)) {
            Map<String, Object> hello = message("hello");
            hello.put("protocol", 1L);
            Map<String, Object> who = new LinkedHashMap<>();
            who.put("name", "Main.java");
            who.put("language", "java");
            who.put("version", System.getProperty("java.version"));
            hello.put("implementation", who);
            hello.put("contracts", List.of("dlq-consumer", "outcome-queue"));
            hello.put("defines", List.of("DLQConsumer", "RetryQueue"));
            hello.put("naming", "snake_case");
            return hello;
        }
        worldCalls = 0;
        try {
            Object value;
            if ("new".equals(type)) {
                instance = create((String) request.get("class"), Json.object(request.get("args")));
                value = null;
            } else if ("call".equals(type)) {
                value = call((String) request.get("method"), Json.array(request.get("args")));
            } else {
                throw new CannotServe("no request of type " + type);
            }
            Map<String, Object> reply = message("return");
            reply.put("value", value);
            return reply;
        } catch (ProtocolBroken broken) {
            throw broken;
        } catch (CannotServe cannot) {
            Map<String, Object> reply = message("errored");
            reply.put("message", cannot.getMessage());
            return reply;
        } catch (RuntimeException raised) {
            return raised(raised);
        }
    }

    /**
     * The class `new` names, made from `args.params`: each a value as is, or a given part (the
     * queue, the DLQ, the clock, the handler) reached through dlqspec.
     */
    private Object create(String cls, Map<String, Object> args) {
        List<Object> params = new ArrayList<>();
        for (Object param : Json.array(args.get("params"))) {
            Map<String, Object> p = Json.object(param);
            params.add(p.containsKey("given") ? new World(this, (String) p.get("given")) : p.get("value"));
        }
        if ("DLQConsumer".equals(cls) && (params.size() == 4 || params.size() == 5)) {
            // No max_attempts: the lesson's default of 3.
            Object max = params.size() == 5 ? params.get(4) : 3L;
            return new DLQConsumer((World) params.get(0), (World) params.get(1), (World) params.get(2),
                    (World) params.get(3), Json.integer(max));
        }
        if ("RetryQueue".equals(cls) && params.size() == 1) {
            return new RetryQueue(params.get(0));
        }
        throw new CannotServe("no class " + cls + " taking " + params.size() + " parameters");
    }

    private Object call(String method, List<Object> args) {
        if (instance instanceof DLQConsumer) {
            DLQConsumer consumer = (DLQConsumer) instance;
            switch (method) {
                case "process_one":
                    return consumer.processOne();
                case "replay":
                    return consumer.replay(args.isEmpty() ? null : Json.strings(args.get(0)));
                default:
                    break;
            }
        } else if (instance instanceof RetryQueue) {
            RetryQueue queue = (RetryQueue) instance;
            switch (method) {
                case "submit":
                    queue.submit((String) args.get(0), args.get(1));
                    return null;
                case "process":
                    return queue.process(args.get(0));
                case "replay":
                    return queue.replay((String) args.get(0));
                case "state":
                    return queue.state();
                case "mutate_state":
                    // Not a method of the class: edit what state() returned, in place.
                    StateOps.apply(queue.state(), Json.array(args.get(0)));
                    return null;
                case "mutate_view":
                    // The same for any view an exercise declares deep-copied: [VIEW, OPS].
                    if (!"state".equals(args.get(0))) {
                        throw new CannotServe("RetryQueue has no view " + Json.write(args.get(0)));
                    }
                    StateOps.apply(queue.state(), Json.array(args.get(1)));
                    return null;
                default:
                    break;
            }
        } else {
            throw new CannotServe("no instance: `new` comes first");
        }
        throw new CannotServe(instance.getClass().getSimpleName() + " has no method " + method);
    }

    private Map<String, Object> raised(RuntimeException error) {
        Map<String, Object> described = new LinkedHashMap<>();
        List<Object> frames = new ArrayList<>();
        if (error instanceof WorldError) {
            WorldError world = (WorldError) error;
            described.put("kind", world.kind);
            described.put("class", world.className);
        } else {
            // IllegalArgumentException is Java's invalid-argument error; only `kind` is compared.
            boolean invalid = error instanceof IllegalArgumentException;
            described.put("kind", invalid ? "invalid_argument" : "error");
            described.put("class", error.getClass().getSimpleName());
            if (!invalid) {
                for (StackTraceElement frame : error.getStackTrace()) {
                    // Java frames carry a file name, not a path: that name is the frame's `file`.
                    if (frame.getFileName() == null || frame.getLineNumber() < 1) {
                        continue;
                    }
                    Map<String, Object> item = new LinkedHashMap<>();
                    item.put("file", frame.getFileName());
                    item.put("line", (long) frame.getLineNumber());
                    item.put("function", frame.getMethodName());
                    frames.add(item);
                }
            }
        }
        described.put("message", error.getMessage() == null ? "" : error.getMessage());
        Map<String, Object> reply = message("raised");
        reply.put("error", described);
        if (!frames.isEmpty()) {
            reply.put("traceback", frames);
        }
        return reply;
    }

    /** A world call: sent, and its answer read before the solution goes on. */
    Object world(String call, Object... args) {
        worldCalls++;
        Map<String, Object> request = message("world");
        request.put("n", worldCalls);
        request.put("call", call);
        request.put("args", List.of(args).isEmpty() ? new ArrayList<>() : new ArrayList<>(java.util.Arrays.asList(args)));
        send(request);
        String line;
        try {
            line = in.readLine();
        } catch (IOException e) {
            throw new ProtocolBroken("stdin: " + e.getMessage());
        }
        if (line == null) {
            throw new ProtocolBroken("stdin closed during a world call");
        }
        Map<String, Object> answer = Json.object(Json.parse(line));
        if ("raise".equals(answer.get("type"))) {
            Map<String, Object> error = Json.object(answer.get("error"));
            String kind = (String) error.get("kind");
            String name = (String) error.get("class");
            String text = (String) error.get("message");
            if ("crash".equals(kind) || "Crash".equals(name)) {
                throw new Crash(name, text);
            }
            throw new WorldError(kind, name, text, (String) error.get("extends"));
        }
        return answer.get("value");
    }

    private Map<String, Object> message(String type) {
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("seq", seq);
        message.put("type", type);
        return message;
    }

    private void send(Map<String, Object> message) {
        out.print(Json.write(message));
        out.print('\n');
        out.flush();
    }

    /** The queue, the DLQ, the clock or the handler, reached through dlqspec. */
    static final class World {
        private final Main main;
        private final String name;

        World(Main main, String name) {
            this.main = main;
            this.name = name;
        }

        Object call(String method, Object... args) {
            return main.world(method.isEmpty() ? name : name + "." + method, args);
        }
    }

    // ---- lesson 000: the dead-letter consumer -------------------------------------------

    static final class DLQConsumer {
        private final World queue;
        private final World dlq;
        private final World handler;
        private final World clock;
        private final long maxAttempts;

        DLQConsumer(World queue, World dlq, World handler, World clock, long maxAttempts) {
            this.queue = queue;
            this.dlq = dlq;
            this.handler = handler;
            this.clock = clock;
            this.maxAttempts = maxAttempts;
        }

        String processOne() {
            Object received = queue.call("receive");
            if (received == null) {
                return null;
            }
            Map<String, Object> msg = Json.object(received);
            String id = (String) msg.get("id");
            // An earlier delivery died between dlq.put and the ack: finish that ack, never put twice.
            if (Boolean.TRUE.equals(dlq.call("has", id))) {
                queue.call("ack", id);
                return "dead";
            }
            long count = Json.integer(msg.get("receive_count"));
            // Every earlier delivery died mid-handler (a Crash): don't give it another go.
            if (count > maxAttempts) {
                return deadLetter(msg, "poison", null, count - 1);
            }
            try {
                handler.call("", msg.get("body"));
            } catch (Crash crash) {
                throw crash;
            } catch (WorldError error) {
                if (error.is("PermanentError")) {
                    return deadLetter(msg, "permanent", error, count);
                }
                // Anything else is transient; the queue's count survives restarts.
                if (count < maxAttempts) {
                    queue.call("retry", id);
                    return "retry";
                }
                return deadLetter(msg, "exhausted", error, count);
            }
            queue.call("ack", id);
            return "ok";
        }

        private String deadLetter(Map<String, Object> msg, String reason, WorldError error, long attempts) {
            Map<String, Object> entry = new LinkedHashMap<>();
            entry.put("id", msg.get("id"));
            entry.put("body", msg.get("body"));
            entry.put("reason", reason);
            entry.put("error", error == null ? null : error.className + ": " + error.getMessage());
            entry.put("attempts", attempts);
            entry.put("first_attempt_at", msg.get("first_received_at"));
            entry.put("failed_at", clock.call("now"));
            dlq.call("put", entry);
            // put before ack: dying in between redelivers it, and the dedupe check finishes the job.
            queue.call("ack", msg.get("id"));
            return "dead";
        }

        List<String> replay(List<String> ids) {
            Map<String, Object> bodies = new LinkedHashMap<>();
            for (Object item : Json.array(dlq.call("entries"))) {
                Map<String, Object> entry = Json.object(item);
                bodies.putIfAbsent((String) entry.get("id"), entry.get("body"));
            }
            List<String> wanted = ids == null ? new ArrayList<>(bodies.keySet()) : ids;
            List<String> replayed = new ArrayList<>();
            for (String id : wanted) {
                if (!bodies.containsKey(id)) {
                    continue;
                }
                // send first: a crash between the two leaves a duplicate, never a lost message.
                queue.call("send", id, bodies.remove(id));
                dlq.call("remove", id);
                replayed.add(id);
            }
            return replayed;
        }
    }

    // ---- lesson 001: the outcome queue ----------------------------------------------------

    static final class RetryQueue {
        private final long maxAttempts;
        private final List<Map<String, Object>> ready = new ArrayList<>();
        private final List<Object> done = new ArrayList<>();
        private final List<Map<String, Object>> quarantine = new ArrayList<>();

        RetryQueue(Object maxAttempts) {
            // A JSON integer (no fraction, no exponent) of at least 1; booleans, strings, null are not.
            if (!(maxAttempts instanceof Long) || (Long) maxAttempts < 1) {
                throw new IllegalArgumentException("max_attempts must be an integer >= 1, got " + Json.write(maxAttempts));
            }
            this.maxAttempts = (Long) maxAttempts;
        }

        void submit(String jobId, Object payload) {
            Map<String, Object> job = new LinkedHashMap<>();
            job.put("id", jobId);
            job.put("payload", payload);
            job.put("attempts", 0L);
            ready.add(job);
        }

        String process(Object outcome) {
            // Validate before touching anything: a bad outcome must not cost a job its place.
            if (!"success".equals(outcome) && !"transient".equals(outcome) && !"permanent".equals(outcome)) {
                throw new IllegalArgumentException("outcome must be success, transient or permanent, got " + Json.write(outcome));
            }
            if (ready.isEmpty()) {
                return null;
            }
            Map<String, Object> job = ready.remove(0);
            long attempts = (Long) job.get("attempts") + 1; // count the attempt before deciding
            job.put("attempts", attempts);
            if ("success".equals(outcome)) {
                done.add(job.get("id"));
                return "done";
            }
            if ("transient".equals(outcome) && attempts < maxAttempts) {
                ready.add(job);
                return "retry";
            }
            job.put("reason", "permanent".equals(outcome) ? "permanent" : "exhausted");
            quarantine.add(job);
            return "dead";
        }

        boolean replay(String jobId) {
            for (int i = 0; i < quarantine.size(); i++) {
                Map<String, Object> job = quarantine.get(i);
                if (job.get("id").equals(jobId)) {
                    quarantine.remove(i);
                    submit(jobId, job.get("payload"));
                    return true;
                }
            }
            return false;
        }

        /** A deep copy: callers inspecting diagnostics must not rewrite the queue. */
        Map<String, Object> state() {
            Map<String, Object> state = new LinkedHashMap<>();
            state.put("ready", Json.copy(ready));
            state.put("done", Json.copy(done));
            state.put("quarantine", Json.copy(quarantine));
            return state;
        }
    }

    /** mutate_state's ops on the object state() returned: set, delete, append, clear. */
    static final class StateOps {
        static void apply(Object root, List<Object> ops) {
            for (Object item : ops) {
                Map<String, Object> op = Json.object(item);
                String kind = (String) op.get("op");
                List<Object> path = Json.array(op.get("path"));
                boolean whole = "append".equals(kind) || "clear".equals(kind);
                Object target = root;
                int steps = whole ? path.size() : path.size() - 1;
                for (int i = 0; i < steps; i++) {
                    target = step(target, path.get(i));
                }
                Object last = path.isEmpty() ? null : path.get(path.size() - 1);
                if ("set".equals(kind) && last != null) {
                    step(target, last);
                    put(target, last, op.get("value"));
                } else if ("delete".equals(kind) && last != null) {
                    step(target, last);
                    remove(target, last);
                } else if ("append".equals(kind) && target instanceof List) {
                    Json.array(target).add(op.get("value"));
                } else if ("clear".equals(kind) && target instanceof List) {
                    Json.array(target).clear();
                } else if ("clear".equals(kind) && target instanceof Map) {
                    Json.object(target).clear();
                } else {
                    throw new CannotServe("mutate_state: cannot " + kind + " at " + Json.write(path));
                }
            }
        }

        private static Object step(Object target, Object key) {
            if (target instanceof List && key instanceof Long) {
                List<Object> list = Json.array(target);
                long at = (Long) key;
                if (at >= 0 && at < list.size()) {
                    return list.get((int) at);
                }
            } else if (target instanceof Map && key instanceof String && Json.object(target).containsKey(key)) {
                return Json.object(target).get(key);
            }
            throw new CannotServe("mutate_state: no " + Json.write(key) + " in " + Json.write(target));
        }

        private static void put(Object target, Object key, Object value) {
            if (target instanceof List) {
                Json.array(target).set((int) (long) (Long) key, value);
            } else {
                Json.object(target).put((String) key, value);
            }
        }

        private static void remove(Object target, Object key) {
            if (target instanceof List) {
                Json.array(target).remove((int) (long) (Long) key);
            } else {
                Json.object(target).remove(key);
            }
        }
    }

    // ---- JSON: objects are maps, arrays lists, integers Long, other numbers Double ----------

    static final class Json {
        private final String text;
        private int at;

        private Json(String text) {
            this.text = text;
        }

        static Object parse(String text) {
            Json reader = new Json(text);
            Object value = reader.value();
            reader.space();
            if (reader.at != text.length()) {
                throw new ProtocolBroken("trailing text in " + text);
            }
            return value;
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> object(Object value) {
            if (!(value instanceof Map)) {
                throw new CannotServe("not a JSON object: " + write(value));
            }
            return (Map<String, Object>) value;
        }

        @SuppressWarnings("unchecked")
        static List<Object> array(Object value) {
            if (!(value instanceof List)) {
                throw new CannotServe("not a JSON array: " + write(value));
            }
            return (List<Object>) value;
        }

        static long integer(Object value) {
            if (!(value instanceof Long)) {
                throw new CannotServe("not a JSON integer: " + write(value));
            }
            return (Long) value;
        }

        static List<String> strings(Object value) {
            if (value == null) {
                return null;
            }
            List<String> strings = new ArrayList<>();
            for (Object item : array(value)) {
                strings.add((String) item);
            }
            return strings;
        }

        static Object copy(Object value) {
            if (value instanceof Map) {
                Map<String, Object> copy = new LinkedHashMap<>();
                for (Map.Entry<String, Object> entry : object(value).entrySet()) {
                    copy.put(entry.getKey(), copy(entry.getValue()));
                }
                return copy;
            }
            if (value instanceof List) {
                List<Object> copy = new ArrayList<>();
                for (Object item : array(value)) {
                    copy.add(copy(item));
                }
                return copy;
            }
            return value;
        }

        private void space() {
            while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
        }

        private Object value() {
            space();
            if (at >= text.length()) {
                throw new ProtocolBroken("JSON ends early: " + text);
            }
            char c = text.charAt(at);
            if (c == '{') {
                at++;
                Map<String, Object> map = new LinkedHashMap<>();
                space();
                if (peek('}')) {
                    return map;
                }
                do {
                    space();
                    String key = string();
                    space();
                    expect(':');
                    map.put(key, value());
                    space();
                } while (peek(','));
                expect('}');
                return map;
            }
            if (c == '[') {
                at++;
                List<Object> list = new ArrayList<>();
                space();
                if (peek(']')) {
                    return list;
                }
                do {
                    list.add(value());
                    space();
                } while (peek(','));
                expect(']');
                return list;
            }
            if (c == '"') {
                return string();
            }
            if (text.startsWith("true", at)) {
                at += 4;
                return Boolean.TRUE;
            }
            if (text.startsWith("false", at)) {
                at += 5;
                return Boolean.FALSE;
            }
            if (text.startsWith("null", at)) {
                at += 4;
                return null;
            }
            return number();
        }

        private boolean peek(char c) {
            if (at < text.length() && text.charAt(at) == c) {
                at++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw new ProtocolBroken("expected '" + c + "' at " + at + " of " + text);
            }
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (true) {
                if (at >= text.length()) {
                    throw new ProtocolBroken("unterminated string in " + text);
                }
                char c = text.charAt(at++);
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = text.charAt(at++);
                switch (e) {
                    case 'n': out.append('\n'); break;
                    case 't': out.append('\t'); break;
                    case 'r': out.append('\r'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'u':
                        // Surrogate pairs arrive as two escapes; appended one after the other they pair up.
                        out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                        break;
                    default: out.append(e);
                }
            }
        }

        private Object number() {
            int start = at;
            boolean integral = true;
            while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) {
                integral &= "0123456789-".indexOf(text.charAt(at)) >= 0;
                at++;
            }
            String digits = text.substring(start, at);
            if (digits.isEmpty()) {
                throw new ProtocolBroken("not JSON at " + start + " of " + text);
            }
            if (integral) {
                try {
                    // Integers are 64-bit: dlqspec sends none beyond 2^53 - 1.
                    return Long.parseLong(digits);
                } catch (NumberFormatException tooLarge) {
                    return Double.parseDouble(digits);
                }
            }
            return Double.parseDouble(digits);
        }

        static String write(Object value) {
            StringBuilder out = new StringBuilder();
            write(value, out);
            return out.toString();
        }

        private static void write(Object value, StringBuilder out) {
            if (value == null) {
                out.append("null");
            } else if (value instanceof String) {
                String text = (String) value;
                out.append('"');
                for (int i = 0; i < text.length(); i++) {
                    char c = text.charAt(i);
                    if (c == '"' || c == '\\') {
                        out.append('\\').append(c);
                    } else if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
                out.append('"');
            } else if (value instanceof Map) {
                out.append('{');
                boolean first = true;
                for (Map.Entry<String, Object> entry : object(value).entrySet()) {
                    if (!first) {
                        out.append(',');
                    }
                    first = false;
                    write(entry.getKey(), out);
                    out.append(':');
                    write(entry.getValue(), out);
                }
                out.append('}');
            } else if (value instanceof List) {
                out.append('[');
                boolean first = true;
                for (Object item : array(value)) {
                    if (!first) {
                        out.append(',');
                    }
                    first = false;
                    write(item, out);
                }
                out.append(']');
            } else if (value instanceof Double) {
                double d = (Double) value;
                out.append(Double.isFinite(d) ? Double.toString(d) : "null");
            } else {
                out.append(value); // Long, Boolean
            }
        }
    }
}
