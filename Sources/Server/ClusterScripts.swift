/// The Lua scripts a node runs in Redis for room counts and node presence (docs/cluster.md,
/// "Keys"). Each runs atomically, so every count a notice carries is the room's exact total at
/// one point of Redis's one order of joins and leaves.
///
/// Keys, for a room `R` and a node `N`: `switchboard:room:R` is the room's channel and the
/// prefix of `switchboard:room:R:online` (a hash: `N\nname` → that name's connections on that
/// node) and `switchboard:room:R:count` (the room's connections on every node);
/// `switchboard:node:N:rooms` is the set of rooms node N has counted members in,
/// `switchboard:node:N` its heartbeat key (expires after `nodeTimeout`), `switchboard:nodes`
/// the set of nodes that may hold counts. A message on a room's channel is `N\n` (the node it
/// comes from), a kind byte (`t` text, `b` binary, `n` notice) and the payload.
///
/// Every connection that joins or leaves is also published on `switchboard:presence` as
/// `seq\nroom\ndelta\nname\nnode`, numbered by `switchboard:presence:seq`, for every node's
/// view of the rooms (ClusterPresence); `switchboard:rooms` is the set of rooms with members,
/// which the `snapshot` script reads.
///
/// The chat groups' presence goes the same way, as rooms named `chat:<group id>` (a colon no
/// room name can hold) whose names are user ids, one per node the user is online on.
enum ClusterScripts {
    /// `changed(room, name, delta, total, node)`: keeps the set of rooms with members and
    /// publishes the numbered presence event of one connection.
    private static let changed = """
        local function changed(room, name, delta, total, node)
          if total > 0 then
            redis.call('SADD', 'switchboard:rooms', room)
          else
            redis.call('SREM', 'switchboard:rooms', room)
          end
          local seq = redis.call('INCR', 'switchboard:presence:seq')
          redis.call('PUBLISH', 'switchboard:presence', seq .. '\\n' .. room .. '\\n' .. delta .. '\\n' .. name .. '\\n' .. node)
        end
        """

    /// The presence sequence number and every room with members with its hash of
    /// `node\nname → connections`: `[seq, room, [field, count, ...], room, ...]`.
    static let snapshot = """
        local answer = {redis.call('GET', 'switchboard:presence:seq') or '0'}
        for _, room in ipairs(redis.call('SMEMBERS', 'switchboard:rooms')) do
          table.insert(answer, room)
          table.insert(answer, redis.call('HGETALL', 'switchboard:room:' .. room .. ':online'))
        end
        return answer
        """

    /// A member joined (`delta` 1) or left (-1): ARGV room, node, name, delta, header. Publishes
    /// the notice with the new total and returns the total. A leave of a member Redis does not
    /// know (lost with a restarted Redis, before the node's sync) changes nothing.
    static let count = changed + """

        local room, node, name, delta, header = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
        local base = 'switchboard:room:' .. room
        local field = node .. '\\n' .. name
        local have = tonumber(redis.call('HGET', base .. ':online', field) or '0')
        if have + delta < 0 then
          return tonumber(redis.call('GET', base .. ':count') or '0')
        end
        if have + delta == 0 then
          redis.call('HDEL', base .. ':online', field)
        else
          redis.call('HSET', base .. ':online', field, have + delta)
        end
        local total = redis.call('INCRBY', base .. ':count', delta)
        if total <= 0 then redis.call('DEL', base .. ':count') end
        changed(room, name, delta, total, node)
        redis.call('SADD', 'switchboard:node:' .. node .. ':rooms', room)
        local verb = ' left ('
        if delta > 0 then verb = ' joined (' end
        redis.call('PUBLISH', base, header .. '* ' .. name .. verb .. total .. ' online)')
        return total
        """

    /// `replace(node, header, desired)`: makes node's share of every room exactly `desired`
    /// (room → name → connections), publishing one notice per connection that appears or
    /// goes, with the running total, rooms and names in sorted order.
    private static let replace = changed + """

        local function replace(node, header, desired)
          local roomsKey = 'switchboard:node:' .. node .. ':rooms'
          local rooms, sorted = {}, {}
          for _, room in ipairs(redis.call('SMEMBERS', roomsKey)) do rooms[room] = true end
          for room, _ in pairs(desired) do rooms[room] = true end
          for room, _ in pairs(rooms) do table.insert(sorted, room) end
          table.sort(sorted)
          local prefix = node .. '\\n'
          for _, room in ipairs(sorted) do
            local base = 'switchboard:room:' .. room
            local want, have, names, seen = desired[room] or {}, {}, {}, {}
            local all = redis.call('HGETALL', base .. ':online')
            for i = 1, #all, 2 do
              if string.sub(all[i], 1, #prefix) == prefix then have[string.sub(all[i], #prefix + 1)] = tonumber(all[i + 1]) end
            end
            for name, _ in pairs(have) do seen[name] = true; table.insert(names, name) end
            for name, _ in pairs(want) do if not seen[name] then table.insert(names, name) end end
            table.sort(names)
            for _, name in ipairs(names) do
              local before, after = have[name] or 0, want[name] or 0
              if after == 0 then
                redis.call('HDEL', base .. ':online', prefix .. name)
              elseif after ~= before then
                redis.call('HSET', base .. ':online', prefix .. name, after)
              end
              local step, verb = 1, ' joined ('
              if after < before then step, verb = -1, ' left (' end
              for _ = 1, math.abs(after - before) do
                local total = redis.call('INCRBY', base .. ':count', step)
                if total <= 0 then redis.call('DEL', base .. ':count'); total = 0 end
                changed(room, name, step, total, node)
                redis.call('PUBLISH', base, header .. '* ' .. name .. verb .. total .. ' online)')
              end
            end
          end
          redis.call('DEL', roomsKey)
          for room, _ in pairs(desired) do redis.call('SADD', roomsKey, room) end
        end
        """

    /// ARGV node, ttl (ms), then room, name, connections for each name this node has in each
    /// room: the node's share becomes exactly that (after a reconnect, or at start, when a
    /// stale share of an earlier process with the same `nodeId` is still there), and its
    /// heartbeat is set. Notices carry the node's own header: its members saw those changes
    /// already.
    static let sync = replace + """

        local node, ttl = ARGV[1], ARGV[2]
        local desired = {}
        for i = 3, #ARGV, 3 do
          desired[ARGV[i]] = desired[ARGV[i]] or {}
          desired[ARGV[i]][ARGV[i + 1]] = tonumber(ARGV[i + 2])
        end
        replace(node, node .. '\\nn', desired)
        redis.call('SET', 'switchboard:node:' .. node, '1', 'PX', ttl)
        redis.call('SADD', 'switchboard:nodes', node)
        return 1
        """

    /// ARGV node, ttl (ms): renews the node's heartbeat, then takes out of every room the
    /// members of each node whose heartbeat expired, with `left` notices under that node's
    /// name (so every node, this one too, passes them on). Returns 1 when the node's own key
    /// was still there (0: it expired, and another node may have taken its members out), then
    /// the nodes taken out.
    static let beat = replace + """

        local self, ttl = ARGV[1], ARGV[2]
        local alive = redis.call('EXISTS', 'switchboard:node:' .. self)
        redis.call('SET', 'switchboard:node:' .. self, '1', 'PX', ttl)
        redis.call('SADD', 'switchboard:nodes', self)
        local reaped = {alive}
        for _, node in ipairs(redis.call('SMEMBERS', 'switchboard:nodes')) do
          if node ~= self and redis.call('EXISTS', 'switchboard:node:' .. node) == 0 then
            replace(node, node .. '\\nn', {})
            redis.call('SREM', 'switchboard:nodes', node)
            table.insert(reaped, node)
          end
        end
        return reaped
        """

}
